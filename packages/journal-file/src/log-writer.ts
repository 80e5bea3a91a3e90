// Group commit over the log: the records queued while the previous write runs go out together in
// one write with at most one fdatasync, and a compaction replaces the log between two groups.
// The first group after a sync starts with a `synced` record, so recovery can tell damage a
// crash left (never synced) from damage to synced data. After a failed write or sync it writes
// nothing more until `resume` has put a new log in place.

import { createDeferred, type Deferred } from "@telepace/core";
import { ioError, JournalError } from "./errors.js";
import { type JournalPaths, type LogFile, readPrefix, replaceLog, writeFully } from "./log-file.js";
import { encodeRecord } from "./record-codec.js";

function failedError(cause: JournalError): JournalError {
  return new JournalError(
    "ERR_JOURNAL_FAILED",
    "The journal is not writing: a write or sync failed, and it has not resumed yet",
    { cause },
  );
}

/** Records that go out in one write. */
interface Group {
  readonly frames: Buffer[];
  /** Finished ids of the group, written as one record at its end. */
  readonly finishedIds: number[];
  bytes: number;
  needsSync: boolean;
  readonly done: Deferred<void>;
}

function newGroup(): Group {
  return { frames: [], finishedIds: [], bytes: 0, needsSync: false, done: createDeferred() };
}

/** What the writer needs from the journal it writes for. */
export interface LogWriterHooks {
  /**
   * The live records, framed, for a compaction. Called synchronously with nothing queued or in
   * flight, so it describes exactly what is on disk plus the group compaction takes over.
   */
  liveFrames(): Buffer[];
  /** Told about each failed write, sync, compaction or resumption (its `ERR_JOURNAL_IO`). */
  onFailure(error: JournalError): void;
  /** Told about each finished compaction. */
  onCompacted(before: number, after: number): void;
  /** Told about each write of a group. */
  onWritten(bytes: number, records: number, isSynced: boolean): void;
}

/** What a {@link LogWriter} starts from. */
export interface LogWriterOptions {
  readonly paths: JournalPaths;
  /** The log, open and synced (everything in it is durable). */
  readonly file: LogFile;
  /** Whether the log ends with a `synced` record covering all of it (a clean close). */
  readonly isCoveredToEnd: boolean;
  /** See `FileUpdateJournalOptions.compactAfterBytes`. */
  readonly compactAfterBytes: number;
  readonly hooks: LogWriterHooks;
}

/** Counters of a {@link LogWriter}. */
export interface LogWriterCounters {
  writes: number;
  syncs: number;
  compactions: number;
}

/**
 * Serializes every change to the log. Writes queued in one turn (and while a write is in flight)
 * share a group; a group syncs when any record in it asked for a sync. After a failed write or
 * sync nothing more is appended: past the last completed sync the page cache can no longer be
 * trusted to match the disk. {@link resume} writes the journal's live records to a new log
 * instead, and appending goes on there.
 */
export class LogWriter {
  readonly #paths: JournalPaths;
  readonly #compactAfterBytes: number;
  readonly #hooks: LogWriterHooks;
  #file: LogFile;
  #pending: Group | undefined;
  #inFlight: Group | undefined;
  #compactionRequests: Deferred<void>[] = [];
  #compactionInFlight: Deferred<void>[] = [];
  #isCompactionDue = false;
  #sizeAfterCompaction = 0;
  /** The log size when the last fdatasync completed: every byte before it is on disk. */
  #durableEnd: number;
  /** The `durableEnd` the log's last `synced` record states (0: none since the log was written). */
  #markedEnd = 0;
  /** The log size when it last ended with a `synced` record covering all of it. */
  #coveredSize = 0;
  #isRunning = false;
  #idle: Deferred<void> | undefined;
  #failure: JournalError | undefined;
  readonly counters: LogWriterCounters = { writes: 0, syncs: 0, compactions: 0 };

  constructor(options: LogWriterOptions) {
    const { file } = options;
    this.#paths = options.paths;
    this.#file = file;
    this.#durableEnd = file.size;
    this.#coveredSize = options.isCoveredToEnd ? file.size : 0;
    this.#compactAfterBytes = options.compactAfterBytes;
    this.#hooks = options.hooks;
  }

  /** Bytes in the log, including its header. */
  get sizeBytes(): number {
    return this.#file.size;
  }

  /** Records in the log. */
  get records(): number {
    return this.#file.records;
  }

  /** Whether a write failed and no {@link resume} has succeeded since. */
  get isFailed(): boolean {
    return this.#failure !== undefined;
  }

  /** `ERR_JOURNAL_FAILED` (its `cause` the latest I/O error) while {@link isFailed}. */
  get failure(): JournalError | undefined {
    return this.#failure;
  }

  /**
   * The part of the log a completed sync covered, read back after a failure. Bytes past it may
   * be in the page cache only, or not even there, so nothing else is trusted.
   */
  async durableBytes(): Promise<Buffer> {
    try {
      return await readPrefix(this.#file.handle, this.#durableEnd);
    } catch (error) {
      throw this.#refail(ioError(`read back the journal log ${this.#paths.log}`, error));
    }
  }

  /**
   * After a failure: writes the live records to a new log in place of the old one (as a
   * compaction does), and accepts writes again. Rejects with the `ERR_JOURNAL_IO` of the attempt
   * (and stays failed) when the file system still fails. Call it with nothing queued, as a
   * failed writer holds nothing.
   */
  async resume(): Promise<void> {
    if (this.#failure === undefined) return;
    const before = this.#file;
    try {
      this.#adopt(await replaceLog(this.#paths, this.#hooks.liveFrames()));
    } catch (error) {
      throw this.#refail(ioError(`write a new journal log ${this.#paths.log}`, error));
    }
    this.#failure = undefined;
    await before.handle.close().catch(() => {});
  }

  /** Queues a framed record; resolves once written (and synced, with `needsSync`). */
  write(frame: Buffer, needsSync: boolean): Promise<void> {
    // Appending past a failure would trust bytes the page cache may not hold: resume first.
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const group = this.#group();
    group.frames.push(frame);
    group.bytes += frame.length;
    group.needsSync ||= needsSync;
    return group.done.promise;
  }

  /** Queues a finished id (no sync of its own); resolves once written. */
  finish(updateId: number): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const group = this.#group();
    group.finishedIds.push(updateId);
    return group.done.promise;
  }

  /** Resolves once everything queued so far is on disk as promised. */
  settled(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const group = this.#pending ?? this.#inFlight;
    return group === undefined ? Promise.resolve() : group.done.promise;
  }

  /** Rewrites the log down to its live records (see {@link LogWriterHooks.liveFrames}). */
  compact(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const request = createDeferred<void>();
    this.#compactionRequests.push(request);
    this.#kick();
    return request.promise;
  }

  /**
   * Waits for the queue to empty, syncs what is unsynced (finishes), ends the log with a
   * `synced` record covering everything, and closes the file.
   */
  async close(): Promise<void> {
    if (this.#isRunning) {
      this.#idle ??= createDeferred();
      await this.#idle.promise;
    }
    const file = this.#file;
    try {
      if (this.#failure === undefined && file.size > this.#coveredSize) {
        if (file.size > this.#durableEnd) await file.handle.datasync();
        this.#durableEnd = file.size;
        const mark = this.#markFrame() as Buffer;
        await writeFully(file.handle, mark, file.size);
        await file.handle.datasync();
        file.size += mark.length;
        file.records += 1;
        this.#coveredSize = file.size;
      }
    } finally {
      await file.handle.close();
    }
  }

  /** A `synced` record when a sync completed since the last one, else `undefined`. */
  #markFrame(): Buffer | undefined {
    if (this.#durableEnd <= this.#markedEnd) return undefined;
    this.#markedEnd = this.#durableEnd;
    return encodeRecord({ type: "synced", durableEnd: this.#durableEnd });
  }

  #group(): Group {
    if (this.#pending === undefined) {
      this.#pending = newGroup();
      this.#kick();
    }
    return this.#pending;
  }

  #kick(): void {
    if (this.#isRunning) return;
    this.#isRunning = true;
    queueMicrotask(() => void this.#run());
  }

  async #run(): Promise<void> {
    try {
      for (;;) {
        if (this.#compactionRequests.length > 0 || this.#isCompactionDue) await this.#compact();
        else if (this.#pending !== undefined) await this.#flush(this.#pending);
        else break;
      }
    } catch (error) {
      this.#fail(error);
    } finally {
      this.#isRunning = false;
      this.#idle?.resolve();
      this.#idle = undefined;
    }
  }

  async #flush(group: Group): Promise<void> {
    this.#pending = undefined;
    this.#inFlight = group;
    if (group.finishedIds.length > 0) {
      const frame = encodeRecord({ type: "finish", updateIds: group.finishedIds });
      group.frames.push(frame);
      group.bytes += frame.length;
    }
    const mark = this.#markFrame();
    if (mark !== undefined) {
      group.frames.unshift(mark);
      group.bytes += mark.length;
    }
    const file = this.#file;
    const buffer =
      group.frames.length === 1
        ? (group.frames[0] as Buffer)
        : Buffer.concat(group.frames, group.bytes);
    await writeFully(file.handle, buffer, file.size);
    this.counters.writes += 1;
    if (group.needsSync) {
      await file.handle.datasync();
      this.counters.syncs += 1;
      this.#durableEnd = file.size + buffer.length;
    }
    file.size += buffer.length;
    file.records += group.frames.length;
    this.#inFlight = undefined;
    group.done.resolve();
    this.#hooks.onWritten(buffer.length, group.frames.length, group.needsSync);
    if (file.size >= this.#compactAfterBytes && file.size >= 2 * this.#sizeAfterCompaction) {
      this.#isCompactionDue = true;
    }
  }

  async #compact(): Promise<void> {
    // The queued group's changes are already in the journal's state, so the new log holds them:
    // compaction writes them instead of the group.
    const group = this.#pending;
    this.#pending = undefined;
    this.#inFlight = group;
    this.#compactionInFlight = this.#compactionRequests;
    this.#compactionRequests = [];
    this.#isCompactionDue = false;
    const before = this.#file;
    this.#adopt(await replaceLog(this.#paths, this.#hooks.liveFrames()));
    this.counters.compactions += 1;
    this.#inFlight = undefined;
    await before.handle.close().catch(() => {});
    group?.done.resolve();
    for (const request of this.#compactionInFlight) request.resolve();
    this.#compactionInFlight = [];
    this.#hooks.onCompacted(before.size, this.#file.size);
  }

  /** A failure while failed already: the latest cause is the one to report. */
  #refail(cause: JournalError): JournalError {
    this.#failure = failedError(cause);
    this.#hooks.onFailure(cause);
    return cause;
  }

  /** Takes a newly written, synced log as the one to append to. */
  #adopt(file: LogFile): void {
    this.#file = file;
    this.#sizeAfterCompaction = file.size;
    this.#durableEnd = file.size;
    this.#markedEnd = 0;
    this.#coveredSize = 0;
    this.#isCompactionDue = false;
  }

  #fail(error: unknown): void {
    const cause = error instanceof JournalError ? error : ioError("write the journal", error);
    this.#failure = failedError(cause);
    // What was being written fails with the I/O error itself; what was queued behind it with
    // ERR_JOURNAL_FAILED, like every later call.
    this.#inFlight?.done.reject(cause);
    for (const request of this.#compactionInFlight) request.reject(cause);
    this.#pending?.done.reject(this.#failure);
    for (const request of this.#compactionRequests) request.reject(this.#failure);
    this.#inFlight = undefined;
    this.#pending = undefined;
    this.#compactionInFlight = [];
    this.#compactionRequests = [];
    this.#hooks.onFailure(cause);
  }
}

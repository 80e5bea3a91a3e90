// FileUpdateJournal: the UpdateJournal of one machine — an append-only, checksummed log in a
// directory, synced before an append resolves, replayed (torn tail cut) when it is opened again.

import { mkdir, rm } from "node:fs/promises";
import type { Update } from "@grammyjs/types";
import { describeValue, type Logger, safeLog } from "@telepace/core";
import type {
  AppendResult,
  JournalSnapshot,
  JournalStateValue,
  UpdateJournal,
} from "@telepace/update-dispatch";
import { checkStateKey, checkStateValue, checkUpdateId, checkUpdates } from "./arguments.js";
import { publish } from "./diagnostics.js";
import { acquireLock, type DirectoryLock } from "./directory-lock.js";
import { ioError, JournalError } from "./errors.js";
import { JournalModel } from "./journal-model.js";
import { type JournalPaths, journalPaths } from "./log-file.js";
import { LogOutage } from "./log-outage.js";
import { type Recovery, recoverLog } from "./log-recovery.js";
import { LogWriter } from "./log-writer.js";
import { type FileUpdateJournalOptions, type ResolvedOptions, resolveOptions } from "./options.js";
import { encodeRecord, type JournalRecord } from "./record-codec.js";
import { UpdateIdSet } from "./update-id-set.js";

/** The `JournalSnapshot` (of `@telepace/update-dispatch`) of a {@link FileUpdateJournal}. */
export interface FileJournalSnapshot extends JournalSnapshot {
  readonly kind: "file";
  readonly isDurable: true;
  /** The directory given to `open`. */
  readonly directory: string;
  /** Size of the log file in bytes, header included. */
  readonly fileBytes: number;
  /** Records in the log file (a batch, a group of finishes or a state change is one record). */
  readonly records: number;
  /** Application records in `state()`. */
  readonly stateKeys: number;
  /** Ranges in the index of stored ids (its memory; 1 while the ids are consecutive). */
  readonly idRanges: number;
  /** Bytes of a torn tail cut off the log when it was opened (0: it ended cleanly). */
  readonly recoveredTailBytes: number;
  /** Monotonic: updates stored by `append`. */
  readonly appended: number;
  /** Monotonic: updates `append` skipped as duplicates. */
  readonly duplicates: number;
  /** Monotonic: updates marked finished. */
  readonly finished: number;
  /** Monotonic: writes to the log (each one a group of records). */
  readonly writes: number;
  /** Monotonic: fdatasync calls on the log. */
  readonly syncs: number;
  /** Monotonic: compactions, automatic or not. */
  readonly compactions: number;
  /**
   * Whether a write or sync failed and the journal has not resumed yet: changes reject with
   * `ERR_JOURNAL_FAILED` until one, after a back-off, manages to write again.
   */
  readonly isFailed: boolean;
  /** Monotonic: failed writes, syncs, compactions and attempts to resume. */
  readonly failures: number;
  /** Monotonic: outages that ended with the journal writing again. */
  readonly recoveries: number;
  readonly isClosed: boolean;
}

interface Counters {
  appended: number;
  duplicates: number;
  finished: number;
}

/**
 * A durable `UpdateJournal` (of `@telepace/update-dispatch`) for one process on one machine,
 * kept in a directory: an append-only log of checksummed records (batches, finishes, state
 * changes), a lock file, and a temporary file while it compacts. Open it with
 * {@link FileUpdateJournal.open}.
 *
 * - `append` resolves after its batch is written and `fdatasync`ed: it survives `kill -9` and a
 *   power cut. Appends, finishes and state changes queued together share one write and one sync.
 * - `finish` resolves after its record is written, without a sync of its own: a process crash
 *   keeps it, a power cut may lose it, and the update then runs again (at-least-once).
 * - `putState` / `deleteState` are synced like appends.
 *
 * @example
 * await using journal = await FileUpdateJournal.open("./data/journal");
 * const { appended } = await journal.append(updates);
 * await confirmOffset(((await journal.highestUpdateId()) ?? -1) + 1);
 */
export class FileUpdateJournal implements UpdateJournal, AsyncDisposable {
  readonly #directory: string;
  readonly #paths: JournalPaths;
  #model: JournalModel;
  readonly #writer: LogWriter;
  readonly #outage: LogOutage;
  readonly #lock: DirectoryLock;
  readonly #logger: Logger;
  readonly #recoveredTailBytes: number;
  readonly #counters: Counters = { appended: 0, duplicates: 0, finished: 0 };
  #closing: Promise<void> | undefined;

  /**
   * Opens the journal in `directory` (created if missing), taking its lock and replaying its log.
   *
   * @throws {JournalError} `ERR_JOURNAL_LOCKED` when a live process has it open,
   *   `ERR_JOURNAL_CORRUPT` when the log is damaged other than at its tail, `ERR_JOURNAL_IO`.
   * @throws {TypeError | RangeError} for a bad directory or option.
   */
  static async open(
    directory: string,
    options?: FileUpdateJournalOptions,
  ): Promise<FileUpdateJournal> {
    if (typeof directory !== "string" || directory.length === 0) {
      throw new TypeError(
        `Expected \`directory\` to be a non-empty string, got ${describeValue(directory)}`,
      );
    }
    const resolved = resolveOptions(options);
    const paths = journalPaths(directory);
    try {
      await mkdir(directory, { recursive: true });
    } catch (error) {
      throw ioError(`create the journal directory ${directory}`, error);
    }
    const lock = await acquireLock(paths.lock);
    let journal: FileUpdateJournal | undefined;
    try {
      const holder = lock.takenOverFrom;
      if (holder !== undefined) {
        safeLog(
          resolved.logger,
          "warn",
          { directory, pid: holder.pid, pidNamespace: holder.pidNamespace ?? null },
          "journal lock of a process that is gone taken over",
        );
      }
      if (!lock.hasLivenessSocket && process.platform !== "win32") {
        safeLog(
          resolved.logger,
          "info",
          { directory },
          "journal lock without a liveness socket: a process in another pid namespace cannot check this one",
        );
      }
      await rm(paths.compacting, { force: true });
      const model = new JournalModel(resolved.dedupeHorizon);
      const recovery = await recoverLog(paths, model);
      if (recovery.cutBytes > 0) {
        safeLog(
          resolved.logger,
          "warn",
          { directory, cutBytes: recovery.cutBytes, size: recovery.file.size },
          "journal log ended in a torn write; cut it off",
        );
      }
      publish("opened", () => ({
        type: "opened",
        directory,
        fileBytes: recovery.file.size,
        records: recovery.file.records,
        cutBytes: recovery.cutBytes,
        takenOverFrom: holder?.pid ?? null,
      }));
      journal = new FileUpdateJournal(directory, paths, model, lock, resolved, recovery);
      if (recovery.file.size >= resolved.compactAfterBytes) await journal.compact();
      return journal;
    } catch (error) {
      // Closing the journal releases the lock too.
      await (journal?.close() ?? lock.release()).catch(() => {});
      throw error instanceof JournalError
        ? error
        : ioError(`open the journal in ${directory}`, error);
    }
  }

  private constructor(
    directory: string,
    paths: JournalPaths,
    model: JournalModel,
    lock: DirectoryLock,
    options: ResolvedOptions,
    recovery: Recovery,
  ) {
    this.#directory = directory;
    this.#paths = paths;
    this.#model = model;
    this.#lock = lock;
    this.#logger = options.logger;
    this.#recoveredTailBytes = recovery.cutBytes;
    this.#writer = new LogWriter({
      paths,
      file: recovery.file,
      isCoveredToEnd: recovery.endsCovered,
      compactAfterBytes: options.compactAfterBytes,
      hooks: {
        liveFrames: () => this.#model.liveRecords().map(encodeRecord),
        onFailure: (error) => {
          const cause = (error.cause as { code?: unknown } | undefined)?.code;
          const systemCode = typeof cause === "string" ? cause : null;
          const isOutageStart = this.#outage.failed();
          safeLog(
            this.#logger,
            isOutageStart ? "error" : "debug",
            { directory, code: error.code, cause: systemCode },
            isOutageStart
              ? "journal write failed; it resumes once a write succeeds again"
              : "journal still cannot write",
          );
          publish("failed", () => ({ type: "failed", directory, code: error.code, systemCode }));
        },
        onCompacted: (beforeBytes, afterBytes) => {
          safeLog(
            this.#logger,
            "debug",
            { directory, beforeBytes, afterBytes },
            "journal compacted",
          );
          publish("compacted", () => ({ type: "compacted", directory, beforeBytes, afterBytes }));
        },
        onWritten: (bytes, records, isSynced) =>
          publish("written", () => ({ type: "written", directory, bytes, records, isSynced })),
      },
    });
    this.#outage = new LogOutage({
      clock: options.clock,
      writer: this.#writer,
      logPath: paths.log,
      dedupeHorizon: options.dedupeHorizon,
      model: () => this.#model,
      replaceModel: (model) => {
        this.#model = model;
      },
      onResumed: (outageMs, failures) => {
        const fileBytes = this.#writer.sizeBytes;
        safeLog(
          this.#logger,
          "info",
          { directory, outageMs, failures },
          "journal writes again after a failed write",
        );
        publish("resumed", () => ({ type: "resumed", directory, outageMs, failures, fileBytes }));
      },
    });
  }

  /** Whether `close()` was called. */
  get isClosed(): boolean {
    return this.#closing !== undefined;
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) {
      throw new JournalError("ERR_JOURNAL_CLOSED", `The journal in ${this.#directory} is closed`);
    }
  }

  /**
   * During an outage, a change first tries to resume the journal (see `LogOutage`): it rejects
   * with `ERR_JOURNAL_FAILED` when that cannot happen yet. `undefined` while the journal writes,
   * so that changes of one turn still go out together.
   */
  #writable(): Promise<void> | undefined {
    if (!this.#writer.isFailed) return undefined;
    return this.#outage.resume().then(() => this.#assertOpen());
  }

  /** Applies a change to the state and queues its record; throws before changing anything. */
  #change(record: JournalRecord, needsSync: boolean): Promise<void> {
    const frame = encodeRecord(record);
    this.#model.apply(record);
    return this.#writer.write(frame, needsSync);
  }

  /**
   * Stores the updates not stored before, in the order given, as one synced record. Ids stored
   * before (finished or not, compacted or not) and repeats within the batch are duplicates; so is
   * any id at or below `highestUpdateId - dedupeHorizon`. A batch of only duplicates resolves
   * once the earlier writes they duplicate are synced.
   */
  async append(updates: readonly Update[]): Promise<AppendResult> {
    this.#assertOpen();
    checkUpdates(updates);
    const writable = this.#writable();
    if (writable !== undefined) await writable;
    const fresh: Update[] = [];
    const inBatch = new Set<number>();
    for (const update of updates) {
      const id = update.update_id;
      if (this.#model.seen.has(id) || inBatch.has(id)) continue;
      inBatch.add(id);
      fresh.push(update);
    }
    const duplicates = updates.length - fresh.length;
    if (fresh.length === 0) await this.#writer.settled();
    else await this.#change({ type: "append", updates: fresh }, true);
    this.#counters.duplicates += duplicates;
    this.#counters.appended += fresh.length;
    return Object.freeze({ appended: Object.freeze(fresh), duplicates });
  }

  /** Marks a stored update finished; unknown and finished ids are a no-op. */
  async finish(updateId: number): Promise<void> {
    this.#assertOpen();
    checkUpdateId("updateId", updateId);
    const writable = this.#writable();
    if (writable !== undefined) {
      // Kept in memory even when resuming fails: the log the journal resumes with says it.
      if (this.#model.unfinished.delete(updateId)) this.#counters.finished += 1;
      return writable;
    }
    if (!this.#model.unfinished.delete(updateId)) return;
    this.#counters.finished += 1;
    await this.#writer.finish(updateId);
  }

  /** Stored, unfinished updates in arrival order. */
  async unfinished(): Promise<readonly Update[]> {
    this.#assertOpen();
    await this.#outage.settled();
    return Object.freeze([...this.#model.unfinished.values()]);
  }

  /** The highest `update_id` ever stored, or `undefined` before the first append. */
  async highestUpdateId(): Promise<number | undefined> {
    this.#assertOpen();
    await this.#outage.settled();
    return this.#model.highestUpdateId;
  }

  /**
   * Forgets every stored id and the highest id, for a new numbering of update ids (Telegram picks
   * the next id at random after a week without updates). Done as a compaction: the new log holds
   * the state records and an empty id index, and replaces the old one atomically, so a crash
   * leaves either the old numbering or the new one.
   *
   * @returns rejects with `ERR_JOURNAL_UNFINISHED`, changing nothing, while an update is
   *   unfinished.
   */
  async restartIds(): Promise<void> {
    this.#assertOpen();
    await this.#writable();
    const unfinished = this.#model.unfinished.size;
    if (unfinished > 0) {
      throw new JournalError(
        "ERR_JOURNAL_UNFINISHED",
        `Cannot restart update ids while ${unfinished} stored updates are unfinished`,
      );
    }
    const { seen, highestUpdateId } = this.#model;
    this.#model.seen = new UpdateIdSet();
    this.#model.highestUpdateId = undefined;
    try {
      await this.#writer.compact();
    } catch (error) {
      // The log still holds the old numbering; so does the model, unless an append came between.
      if (this.#model.seen.rangeCount === 0 && this.#model.highestUpdateId === undefined) {
        this.#model.seen = seen;
        this.#model.highestUpdateId = highestUpdateId;
      }
      throw error;
    }
  }

  /**
   * Rewrites the log down to its live records (unfinished updates, state, the highest id and the
   * stored-id index) in a new file, syncs it, renames it over the log and syncs the directory.
   */
  async compact(): Promise<void> {
    this.#assertOpen();
    // Resuming writes a compacted log already.
    const writable = this.#writable();
    await (writable ?? this.#writer.compact());
  }

  /** Stores (replaces) one application record; synced like an append. */
  async putState(key: string, value: JournalStateValue): Promise<void> {
    this.#assertOpen();
    checkStateKey(key);
    checkStateValue(value);
    const writable = this.#writable();
    if (writable !== undefined) await writable;
    // A copy, so the caller changing its object later cannot change what was stored.
    const copy = JSON.parse(JSON.stringify(value)) as JournalStateValue;
    await this.#change({ type: "put", key, value: copy }, true);
  }

  /** Removes one application record; a missing key is a no-op. */
  async deleteState(key: string): Promise<void> {
    this.#assertOpen();
    checkStateKey(key);
    const writable = this.#writable();
    if (writable !== undefined) await writable;
    if (!this.#model.state.has(key)) return;
    await this.#change({ type: "delete", key }, true);
  }

  /** Every application record (values are frozen copies). */
  async state(): Promise<ReadonlyMap<string, JournalStateValue>> {
    this.#assertOpen();
    await this.#outage.settled();
    return new Map(this.#model.state);
  }

  /** A fresh frozen view; works after `close()` too. */
  snapshot(): FileJournalSnapshot {
    return Object.freeze({
      kind: "file",
      isDurable: true,
      unfinished: this.#model.unfinished.size,
      highestUpdateId: this.#model.highestUpdateId,
      directory: this.#directory,
      fileBytes: this.#writer.sizeBytes,
      records: this.#writer.records,
      stateKeys: this.#model.state.size,
      idRanges: this.#model.seen.rangeCount,
      recoveredTailBytes: this.#recoveredTailBytes,
      ...this.#counters,
      ...this.#writer.counters,
      ...this.#outage.counters,
      isFailed: this.#writer.isFailed,
      isClosed: this.isClosed,
    });
  }

  /**
   * Lets queued writes finish, closes the log and releases the lock. Idempotent: every call
   * returns the same promise. Never rejects for a journal whose writes failed (it still closes).
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    // One more try to write what an outage held back (finishes), whatever the back-off says.
    if (this.#writer.isFailed) await this.#outage.resume(true).catch(() => {});
    try {
      await this.#writer.close();
    } catch (error) {
      safeLog(this.#logger, "warn", { directory: this.#directory }, "journal log close failed");
      throw ioError(`close the journal log ${this.#paths.log}`, error);
    } finally {
      await this.#lock.release().catch(() => {});
    }
  }

  /** `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

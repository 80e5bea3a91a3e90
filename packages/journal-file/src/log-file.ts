// The files of a journal directory and the two ways they are written: a positional append to the
// log, and an atomic replacement of the whole log (write a temporary file, sync, rename, sync);
// and the reads of stored updates that may still run in a log that was just replaced.

import { type FileHandle, open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { FILE_HEADER } from "./record-codec.js";

/** The file names inside a journal directory. */
export interface JournalPaths {
  readonly directory: string;
  /** The append-only log. */
  readonly log: string;
  /** A log being written by compaction; removed on open if a crash left it. */
  readonly compacting: string;
  /** Holds the pid of the process that has the directory open. */
  readonly lock: string;
}

export function journalPaths(directory: string): JournalPaths {
  return {
    directory,
    log: join(directory, "journal.log"),
    compacting: join(directory, "journal.log.compacting"),
    lock: join(directory, "journal.lock"),
  };
}

/** An open log: the handle writes go to, its size (the next write position) and record count. */
export interface LogFile {
  readonly handle: FileHandle;
  size: number;
  records: number;
  /** Reads of stored updates under way in it. */
  readers: number;
  /** Replaced by a new log: closed once its last read is done. */
  isRetired: boolean;
}

function noop(): void {}

/** A log open at `handle`, `size` bytes long, with `records` records. */
export function logFile(handle: FileHandle, size: number, records: number): LogFile {
  return { handle, size, records, readers: 0, isRetired: false };
}

/** Runs `read` on the log's handle, which stays open until it is done even if the log is replaced. */
export async function readLog<T>(
  file: LogFile,
  read: (handle: FileHandle) => Promise<T>,
): Promise<T> {
  file.readers += 1;
  try {
    return await read(file.handle);
  } finally {
    file.readers -= 1;
    if (file.isRetired && file.readers === 0) await file.handle.close().catch(noop);
  }
}

/** A log that was replaced: closed now, or by its last read. */
export async function retireLog(file: LogFile): Promise<void> {
  file.isRetired = true;
  if (file.readers === 0) await file.handle.close().catch(noop);
}

/** How many bytes a {@link LogSink} gathers before it writes them. */
const SINK_BYTES = 1024 * 1024;

/** Writes frames one after another into a new log, a megabyte at a time. */
export class LogSink {
  readonly #handle: FileHandle;
  #written = 0;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** Frames added (the header is not one). */
  records = 0;

  constructor(handle: FileHandle) {
    this.#handle = handle;
    this.#pending.push(FILE_HEADER);
    this.#pendingBytes = FILE_HEADER.length;
  }

  /** The size of the log so far: where the next frame goes. */
  get size(): number {
    return this.#written + this.#pendingBytes;
  }

  /** Adds a frame; resolves with the offset it is at, once the bytes before it are written. */
  async add(frame: Buffer): Promise<number> {
    const offset = this.size;
    this.#pending.push(frame);
    this.#pendingBytes += frame.length;
    this.records += 1;
    if (this.#pendingBytes >= SINK_BYTES) await this.flush();
    return offset;
  }

  /** Writes what was added. */
  async flush(): Promise<void> {
    if (this.#pendingBytes === 0) return;
    const buffer = Buffer.concat(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    await writeFully(this.#handle, buffer, this.#written);
    this.#written += buffer.length;
  }
}

/** Writes all of `buffer` at `position`, however many calls the kernel needs. */
export async function writeFully(
  handle: FileHandle,
  buffer: Buffer,
  position: number,
): Promise<void> {
  let written = 0;
  while (written < buffer.length) {
    const { bytesWritten } = await handle.write(
      buffer,
      written,
      buffer.length - written,
      position + written,
    );
    written += bytesWritten;
  }
}

/** Makes a rename or a new file in `directory` durable (its entry, not just its bytes). */
export async function syncDirectory(directory: string): Promise<void> {
  // Windows cannot open a directory as a file; NTFS journals the rename itself.
  if (process.platform === "win32") return;
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Puts a new log in place of the old one, atomically: `fill` adds its frames (after the file
 * header) to a sink, the file is synced and renamed over the log, and a crash leaves either the
 * old log or the new one, never a mix. Returns the new log, open.
 */
export async function replaceLog(
  paths: JournalPaths,
  fill: (sink: LogSink) => Promise<void>,
): Promise<LogFile> {
  // Readable too: stored updates are read back from it, and after a failed write the synced
  // part of the log is read again (see LogOutage).
  const handle = await open(paths.compacting, "w+");
  try {
    const sink = new LogSink(handle);
    await fill(sink);
    await sink.flush();
    await handle.datasync();
    await rename(paths.compacting, paths.log);
    await syncDirectory(paths.directory);
    return logFile(handle, sink.size, sink.records);
  } catch (error) {
    await handle.close().catch(noop);
    // On a full disk, what was written of the new log is the space the next attempt needs.
    await rm(paths.compacting, { force: true }).catch(noop);
    throw error;
  }
}

// The files of a journal directory and the two ways they are written: a positional append to the
// log, and an atomic replacement of the whole log (write a temporary file, sync, rename, sync).

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

/** Reads the first `length` bytes of a file, however many calls the kernel needs. */
export async function readPrefix(handle: FileHandle, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const { bytesRead } = await handle.read(buffer, read, length - read, read);
    if (bytesRead === 0) throw new Error(`The file ended at byte ${read} of ${length}`);
    read += bytesRead;
  }
  return buffer;
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
 * Puts a new log holding `frames` (after the file header) in place of the old one, atomically: a
 * crash leaves either the old log or the new one, never a mix. Returns the new log, open.
 */
export async function replaceLog(paths: JournalPaths, frames: readonly Buffer[]): Promise<LogFile> {
  const content = Buffer.concat([FILE_HEADER, ...frames]);
  // Readable too: after a failed write the synced part of the log is read back (see LogOutage).
  const handle = await open(paths.compacting, "w+");
  try {
    await writeFully(handle, content, 0);
    await handle.datasync();
    await rename(paths.compacting, paths.log);
    await syncDirectory(paths.directory);
  } catch (error) {
    await handle.close().catch(() => {});
    // On a full disk, what was written of the new log is the space the next attempt needs.
    await rm(paths.compacting, { force: true }).catch(() => {});
    throw error;
  }
  return { handle, size: content.length, records: frames.length };
}

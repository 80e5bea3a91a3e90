// Reading a log back on open: replay every intact record, cut a torn tail (an unfinished last
// write), and refuse damage anywhere else rather than silently lose synced records.

import { type FileHandle, open } from "node:fs/promises";
import { ioError, JournalError } from "./errors.js";
import type { JournalModel } from "./journal-model.js";
import { type JournalPaths, type LogFile, replaceLog } from "./log-file.js";
import { encodeRecord, FILE_HEADER, findIntactFrameAfter, readRecord } from "./record-codec.js";

/** What {@link recoverLog} found. */
export interface Recovery {
  readonly file: LogFile;
  /** Bytes of a torn tail cut off the end of the log (0 when it ended cleanly). */
  readonly cutBytes: number;
  /** Whether the log did not exist and was created. */
  readonly isNew: boolean;
}

function corrupt(path: string, detail: string): JournalError {
  return new JournalError(
    "ERR_JOURNAL_CORRUPT",
    `The journal log ${path} is damaged: ${detail}. Nothing was changed; restore it from a backup, or truncate it at that offset to keep the records before it`,
  );
}

async function openOrCreate(
  paths: JournalPaths,
  model: JournalModel,
): Promise<{ handle: FileHandle; isNew: boolean }> {
  try {
    return { handle: await open(paths.log, "r+"), isNew: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const base = model.liveRecords().map(encodeRecord);
  const { handle } = await replaceLog(paths, base);
  await handle.close();
  return { handle: await open(paths.log, "r+"), isNew: true };
}

/**
 * Opens (or creates) the log and replays it into `model`. A damaged record with no intact record
 * after it is the torn tail of a write that a crash interrupted: the log is truncated there and
 * synced. A damaged record followed by an intact one, a record with a valid checksum that this
 * version cannot read, or a missing file header is `ERR_JOURNAL_CORRUPT`, and the file is left
 * as it is.
 */
export async function recoverLog(paths: JournalPaths, model: JournalModel): Promise<Recovery> {
  let opened: { handle: FileHandle; isNew: boolean };
  try {
    opened = await openOrCreate(paths, model);
  } catch (error) {
    throw ioError(`open the journal log ${paths.log}`, error);
  }
  const { handle, isNew } = opened;
  try {
    const bytes = await handle.readFile();
    if (
      bytes.length < FILE_HEADER.length ||
      !bytes.subarray(0, FILE_HEADER.length).equals(FILE_HEADER)
    ) {
      throw corrupt(paths.log, "it does not start with a telepace journal header (version 1)");
    }
    let offset = FILE_HEADER.length;
    let records = 0;
    while (offset < bytes.length) {
      const step = readRecord(bytes, offset);
      if (step.ok) {
        model.apply(step.record);
        records += 1;
        offset = step.end;
        continue;
      }
      if (step.damage === "unreadable") {
        throw corrupt(
          paths.log,
          `the record at byte ${offset} has a valid checksum but cannot be read`,
        );
      }
      const intact = findIntactFrameAfter(bytes, offset);
      if (intact !== undefined) {
        throw corrupt(
          paths.log,
          `the record at byte ${offset} is damaged (${step.damage}) and intact records follow at byte ${intact}`,
        );
      }
      try {
        await handle.truncate(offset);
        await handle.datasync();
      } catch (error) {
        throw ioError(`cut the torn tail of ${paths.log}`, error);
      }
      break;
    }
    return { file: { handle, size: offset, records }, cutBytes: bytes.length - offset, isNew };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error instanceof JournalError
      ? error
      : ioError(`read the journal log ${paths.log}`, error);
  }
}

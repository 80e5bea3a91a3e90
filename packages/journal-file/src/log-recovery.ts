// Reading a log back on open: replay every intact record, cut a torn tail (what a crash left of
// writes no sync had covered), and refuse damage to synced records rather than silently lose them.

import { type FileHandle, open } from "node:fs/promises";
import { ioError, JournalError } from "./errors.js";
import { JournalModel } from "./journal-model.js";
import { type JournalPaths, type LogFile, replaceLog } from "./log-file.js";
import { encodeRecord, FILE_HEADER, findSyncCovering, readRecord } from "./record-codec.js";

/** What {@link recoverLog} found. */
export interface Recovery {
  readonly file: LogFile;
  /** Bytes of a torn tail cut off the end of the log (0 when it ended cleanly). */
  readonly cutBytes: number;
  /** Whether the log did not exist and was created. */
  readonly isNew: boolean;
  /** Whether the log ends with a `synced` record covering everything before it (a clean close). */
  readonly endsCovered: boolean;
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

/** How far {@link replayRecords} got. */
interface Replay {
  /** Where the intact records end (the whole buffer unless its tail is torn). */
  readonly end: number;
  readonly records: number;
  /** Whether the last record is a `synced` record covering everything before it. */
  readonly endsCovered: boolean;
}

/**
 * Replays the records of a log (`bytes`, header included) into `model`, up to the first damaged
 * one that no later `synced` record covers. Damage a `synced` record covers, a record this
 * version cannot read and a missing header are `ERR_JOURNAL_CORRUPT`.
 */
function replayRecords(bytes: Buffer, model: JournalModel, path: string): Replay {
  if (
    bytes.length < FILE_HEADER.length ||
    !bytes.subarray(0, FILE_HEADER.length).equals(FILE_HEADER)
  ) {
    throw corrupt(path, "it does not start with a telepace journal header (version 1)");
  }
  let offset = FILE_HEADER.length;
  let records = 0;
  let endsCovered = false;
  while (offset < bytes.length) {
    const step = readRecord(bytes, offset);
    if (step.ok) {
      model.apply(step.record);
      records += 1;
      endsCovered = step.record.type === "synced" && step.record.durableEnd === offset;
      offset = step.end;
      continue;
    }
    if (step.damage === "unreadable") {
      throw corrupt(path, `the record at byte ${offset} has a valid checksum but cannot be read`);
    }
    const covering = findSyncCovering(bytes, offset);
    if (covering !== undefined) {
      throw corrupt(
        path,
        `the record at byte ${offset} is damaged (${step.damage}) although the record at byte ${covering} says it had been synced`,
      );
    }
    break;
  }
  return { end: offset, records, endsCovered };
}

/**
 * Opens (or creates) the log and replays it into `model`. At the first damaged record: when no
 * intact record after it says a completed sync covered it (a `synced` record), it is the torn
 * tail of writes a crash interrupted, and the log is truncated there. When one does, the damage
 * is to synced data and `open` fails with `ERR_JOURNAL_CORRUPT`, leaving the file as it is; so
 * does a record with a valid checksum that this version cannot read, or a missing header.
 * The log is synced either way, so that what is in it now is durable.
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
    const { end, records, endsCovered } = replayRecords(bytes, model, paths.log);
    try {
      if (end < bytes.length) await handle.truncate(end);
      // What a crashed process wrote may still be only in the page cache: sync it before
      // this process's records say it is durable.
      await handle.datasync();
    } catch (error) {
      throw ioError(`sync the journal log ${paths.log}`, error);
    }
    const cutBytes = bytes.length - end;
    return { file: { handle, size: end, records }, cutBytes, isNew, endsCovered };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error instanceof JournalError
      ? error
      : ioError(`read the journal log ${paths.log}`, error);
  }
}

/**
 * What the journal holds after a failed write, for resuming: the synced part of its log
 * (`durable`, every byte a completed sync covered, so the page cache cannot show it otherwise),
 * replayed into a fresh model — without what was never acknowledged — plus the finishes
 * `current` has that it lacks (asked for since the last sync, or during the outage).
 */
export function durableModel(
  durable: Buffer,
  path: string,
  current: JournalModel,
  dedupeHorizon: number,
): JournalModel {
  const model = new JournalModel(dedupeHorizon);
  const { end } = replayRecords(durable, model, path);
  if (end < durable.length) {
    throw corrupt(
      path,
      `the record at byte ${end} is damaged although a completed sync covered it`,
    );
  }
  for (const id of [...model.unfinished.keys()]) {
    if (!current.unfinished.has(id)) model.unfinished.delete(id);
  }
  return model;
}

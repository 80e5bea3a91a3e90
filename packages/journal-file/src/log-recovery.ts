// Reading a log back on open: replay every intact record, cut a torn tail (what a crash left of
// writes no sync had covered), and refuse damage to synced records rather than silently lose them.
// The log is read a piece at a time, and updates are kept by their place: opening a journal of
// many unfinished updates does not load them.

import { type FileHandle, open } from "node:fs/promises";
import { ioError, JournalError } from "./errors.js";
import { JournalModel } from "./journal-model.js";
import { type JournalPaths, type LogFile, logFile, replaceLog } from "./log-file.js";
import { LogReader } from "./log-reader.js";
import { encodeRecord, FILE_HEADER, findSyncCovering } from "./record-codec.js";

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
  const { handle } = await replaceLog(paths, async (sink) => {
    await sink.add(encodeRecord(model.baseRecord()));
  });
  await handle.close();
  return { handle: await open(paths.log, "r+"), isNew: true };
}

/** How far {@link replayLog} got. */
interface Replay {
  /** Where the intact records end (the end of the log unless its tail is torn). */
  readonly end: number;
  readonly records: number;
  /** Whether the last record is a `synced` record covering everything before it. */
  readonly endsCovered: boolean;
}

/**
 * Replays the first `end` bytes of a log (header included) into `model`, up to the first damaged
 * record that no later `synced` record covers. Damage a `synced` record covers, a record this
 * version cannot read and a missing header are `ERR_JOURNAL_CORRUPT`.
 */
async function replayLog(
  handle: FileHandle,
  end: number,
  model: JournalModel,
  path: string,
): Promise<Replay> {
  const reader = new LogReader(handle, end);
  const header = await reader.head(FILE_HEADER.length);
  if (header.length < FILE_HEADER.length || !header.equals(FILE_HEADER)) {
    throw corrupt(path, "it does not start with a telepace journal header (version 1)");
  }
  let offset = FILE_HEADER.length;
  let records = 0;
  let endsCovered = false;
  while (offset < end) {
    const step = await reader.step(offset);
    if (step.kind !== "damage") {
      if (step.kind === "append") model.applyPlaced(step.ids, step.places);
      else model.apply(step.record);
      records += 1;
      endsCovered =
        step.kind === "record" &&
        step.record.type === "synced" &&
        step.record.durableEnd === offset;
      offset = step.end;
      continue;
    }
    if (step.damage === "unreadable") {
      throw corrupt(path, `the record at byte ${offset} has a valid checksum but cannot be read`);
    }
    const covering = findSyncCovering(await reader.rest(offset), offset, offset);
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
    const { size } = await handle.stat();
    const { end, records, endsCovered } = await replayLog(handle, size, model, paths.log);
    try {
      if (end < size) await handle.truncate(end);
      // What a crashed process wrote may still be only in the page cache: sync it before
      // this process's records say it is durable.
      await handle.datasync();
    } catch (error) {
      throw ioError(`sync the journal log ${paths.log}`, error);
    }
    return { file: logFile(handle, end, records), cutBytes: size - end, isNew, endsCovered };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error instanceof JournalError
      ? error
      : ioError(`read the journal log ${paths.log}`, error);
  }
}

/**
 * What the journal holds after a failed write, for resuming: the synced part of its log (the
 * first `durableEnd` bytes, every byte a completed sync covered, so the page cache cannot show
 * it otherwise), replayed into a fresh model — without what was never acknowledged — less the
 * updates `current` has finished since (asked for since the last sync, or during the outage).
 */
export async function durableModel(
  file: LogFile,
  durableEnd: number,
  path: string,
  current: JournalModel,
  dedupeHorizon: number,
): Promise<JournalModel> {
  const model = new JournalModel(dedupeHorizon);
  const { end } = await replayLog(file.handle, durableEnd, model, path);
  if (end < durableEnd) {
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

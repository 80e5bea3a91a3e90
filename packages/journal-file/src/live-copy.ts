// Writing a journal's live records into a new log (compaction, resuming after a failed write):
// the base, the unfinished updates — their bytes copied from where they are in the old log, up to
// 100 to a record — and the state. The updates' new places take over when the new log does.

import { encodeAppendFrame } from "./append-frame.js";
import type { JournalModel, StoredEntry } from "./journal-model.js";
import { type LogFile, type LogSink, readLog } from "./log-file.js";
import { readPlaces, StoredPlace } from "./place-reader.js";
import { encodeRecord } from "./record-codec.js";

/** At most this many updates, and about this many bytes, go in one append record. */
const UPDATES_PER_RECORD = 100;
const BYTES_PER_RECORD = 1024 * 1024;

/** An unfinished update moved to the new log: what the model held, and its new place. */
interface Move {
  readonly id: number;
  readonly from: StoredEntry;
  readonly to: StoredPlace;
}

/** The JSON of each entry: new updates are stringified, stored ones read from `file`. */
async function jsonOf(
  entries: readonly StoredEntry[],
  file: LogFile,
): Promise<(string | Uint8Array)[]> {
  const places: StoredPlace[] = [];
  for (const entry of entries) if (entry instanceof StoredPlace) places.push(entry);
  const bytes =
    places.length === 0 ? [] : await readLog(file, (handle) => readPlaces(handle, places));
  let next = 0;
  return entries.map((entry) =>
    entry instanceof StoredPlace ? (bytes[next++] as Buffer) : JSON.stringify(entry),
  );
}

/**
 * Adds the live records of `model()` to `sink`, reading stored updates from `file` (the log being
 * replaced). Resolves with a function to call once the new log has taken the old one's place: it
 * moves every update still unfinished to its place in the new log. The records describe the model
 * when this was called; changes after that go to the new log as records of their own.
 */
export async function copyLive(
  model: () => JournalModel,
  file: LogFile,
  sink: LogSink,
): Promise<() => void> {
  const current = model();
  const base = encodeRecord(current.baseRecord());
  const ids = [...current.unfinished.keys()];
  const entries = [...current.unfinished.values()];
  const state = [...current.state];
  await sink.add(base);
  const moves: Move[] = [];
  const chunks: [number, number][] = [];
  // The unfinished updates from `first` (inclusive) to `end`, as one append record.
  const flush = async (first: number, end: number): Promise<void> => {
    const chunk = entries.slice(first, end);
    const { frame, starts, lengths } = encodeAppendFrame(await jsonOf(chunk, file));
    const offset = await sink.add(frame);
    chunk.forEach((from, index) => {
      const to = new StoredPlace(offset + (starts[index] as number), lengths[index] as number);
      moves.push({ id: ids[first + index] as number, from, to });
    });
  };
  let first = 0;
  let chunkBytes = 0;
  entries.forEach((entry, index) => {
    // A new update's size is not known before it is stringified; count it as 1 KiB.
    const bytes = entry instanceof StoredPlace ? entry.length : 1024;
    const count = index - first;
    if (count === UPDATES_PER_RECORD || (count > 0 && chunkBytes + bytes > BYTES_PER_RECORD)) {
      chunks.push([first, index]);
      first = index;
      chunkBytes = 0;
    }
    chunkBytes += bytes;
  });
  if (first < entries.length) chunks.push([first, entries.length]);
  for (const [from, to] of chunks) await flush(from, to);
  for (const [key, value] of state) await sink.add(encodeRecord({ type: "put", key, value }));
  return () => {
    const { unfinished: now } = model();
    for (const { id, from, to } of moves) if (now.get(id) === from) now.set(id, to);
  };
}

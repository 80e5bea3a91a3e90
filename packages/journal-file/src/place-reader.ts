// Stored updates by their place in the log: where one update's JSON is, and reading a set of them
// back with a few positional reads (places close together share one), beside the writes that go on.

import type { FileHandle } from "node:fs/promises";

/** Where one stored update's JSON is in the log: its first byte and its length. */
export class StoredPlace {
  constructor(
    readonly offset: number,
    readonly length: number,
  ) {}
}

/** Places at most this far apart are read in one go (the bytes between are read and dropped). */
const MAX_GAP_BYTES = 4096;
/** The most one read takes at once. */
const MAX_RUN_BYTES = 1024 * 1024;

async function readRun(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let read = 0;
  while (read < length) {
    const { bytesRead } = await handle.read(buffer, read, length - read, position + read);
    if (bytesRead === 0) {
      throw new Error(`the log ends at byte ${position + read}, inside an update stored there`);
    }
    read += bytesRead;
  }
  return buffer;
}

/**
 * The bytes at each place, in the order given (views into the buffers read). Positional reads
 * only: appends at the end of the log go on meanwhile. Throws when the log is shorter.
 */
export async function readPlaces(
  handle: FileHandle,
  places: readonly StoredPlace[],
): Promise<Buffer[]> {
  const order = places.map((_, index) => index);
  order.sort((a, b) => (places[a] as StoredPlace).offset - (places[b] as StoredPlace).offset);
  const runs: { readonly start: number; end: number; readonly members: number[] }[] = [];
  for (const index of order) {
    const place = places[index] as StoredPlace;
    const run = runs[runs.length - 1];
    const end = place.offset + place.length;
    if (
      run !== undefined &&
      place.offset - run.end <= MAX_GAP_BYTES &&
      end - run.start <= MAX_RUN_BYTES
    ) {
      run.end = Math.max(run.end, end);
      run.members.push(index);
    } else {
      runs.push({ start: place.offset, end, members: [index] });
    }
  }
  const bytes: Buffer[] = new Array(places.length);
  await Promise.all(
    runs.map(async (run) => {
      const buffer = await readRun(handle, run.start, run.end - run.start);
      for (const index of run.members) {
        const place = places[index] as StoredPlace;
        const from = place.offset - run.start;
        bytes[index] = buffer.subarray(from, from + place.length);
      }
    }),
  );
  return bytes;
}

// An append record and the place of each update inside it: a batch is the JSON array of its
// updates (the bytes `encodeRecord` writes too), and the byte range of every update in it is known
// when it is framed and found again when the log is read, so the journal keeps where an update is
// instead of the update itself.

import { APPEND_TYPE, allocateFrame, RECORD_HEADER_BYTES, sealFrame } from "./record-codec.js";

/** A framed append record and where each update's JSON sits in it, from the frame's start. */
export interface AppendFrame {
  readonly frame: Buffer;
  readonly starts: readonly number[];
  readonly lengths: readonly number[];
}

const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Frames an append record of updates given as their JSON: text for new updates, bytes for what a
 * compaction copies out of the old log. Throws a `RangeError` when it would be larger than a
 * record may be.
 */
export function encodeAppendFrame(parts: readonly (string | Uint8Array)[]): AppendFrame {
  const lengths = parts.map((part) =>
    typeof part === "string" ? Buffer.byteLength(part) : part.length,
  );
  let bodyLength = 2 + Math.max(0, parts.length - 1);
  for (const length of lengths) bodyLength += length;
  const frame = allocateFrame(APPEND_TYPE, 1 + bodyLength);
  const starts: number[] = [];
  let position = RECORD_HEADER_BYTES + 1;
  frame[position++] = OPEN;
  parts.forEach((part, index) => {
    if (index > 0) frame[position++] = COMMA;
    starts.push(position);
    if (typeof part === "string") frame.write(part, position, "utf8");
    else frame.set(part, position);
    position += lengths[index] as number;
  });
  frame[position] = CLOSE;
  return { frame: sealFrame(frame), starts, lengths };
}

/**
 * The byte ranges of the elements of the JSON array in `bytes[start, end)`, as
 * `[start0, end0, start1, end1, …]`, or `undefined` when it is not an array of objects. JSON
 * strings are skipped whole, so a bracket or comma inside one does not count; UTF-8 continuation
 * bytes never equal these ASCII characters.
 */
export function arrayElementRanges(
  bytes: Uint8Array,
  start: number,
  end: number,
): number[] | undefined {
  if (end - start < 2 || bytes[start] !== OPEN || bytes[end - 1] !== CLOSE) return undefined;
  const ranges: number[] = [];
  const last = end - 1;
  let depth = 0;
  let elementStart = -1;
  let isAfterComma = false;
  for (let index = start + 1; index < last; index++) {
    const byte = bytes[index] as number;
    if (depth === 0) {
      if (byte === OPEN_OBJECT && elementStart === -1) {
        elementStart = index;
        isAfterComma = false;
        depth = 1;
      } else if (byte === COMMA && elementStart !== -1) {
        elementStart = -1;
        isAfterComma = true;
      } else if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) {
        return undefined; // anything else at the top is not an array of updates
      }
    } else if (byte === QUOTE) {
      // Skip the string: a backslash escapes the next byte, whatever it is.
      for (index++; index < last && bytes[index] !== QUOTE; index++) {
        if (bytes[index] === BACKSLASH) index++;
      }
    } else if (byte === OPEN_OBJECT || byte === OPEN) {
      depth++;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE) {
      depth--;
      if (depth === 0) ranges.push(elementStart, index + 1);
    }
  }
  return depth === 0 && !isAfterComma ? ranges : undefined;
}

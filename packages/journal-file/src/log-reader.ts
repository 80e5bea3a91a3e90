// Reading a log from its file a piece at a time, so opening a large journal holds one piece of it
// in memory: each record with its offset, an append's updates as ids and places (their content is
// parsed to check it, then dropped), and damage where a record is not whole.

import type { FileHandle } from "node:fs/promises";
import { arrayElementRanges } from "./append-frame.js";
import { StoredPlace } from "./place-reader.js";
import {
  APPEND_TYPE,
  type DamageKind,
  frameAt,
  isNonNegativeInteger,
  type JournalRecord,
  MAX_RECORD_BYTES,
  RECORD_HEADER_BYTES,
  readRecord,
} from "./record-codec.js";

/** How much of the log is read at once (more for a larger record). */
const CHUNK_BYTES = 1024 * 1024;

/** One step through a log. */
export type LogStep =
  | {
      readonly kind: "record";
      readonly end: number;
      /** Any record but an append. */
      readonly record: JournalRecord;
    }
  | {
      readonly kind: "append";
      readonly end: number;
      readonly ids: readonly number[];
      readonly places: readonly StoredPlace[];
    }
  | { readonly kind: "damage"; readonly damage: DamageKind };

/** The ids and places of an append record's updates, or `undefined` when they are not updates. */
function placedUpdates(
  bytes: Buffer,
  bodyStart: number,
  bodyEnd: number,
  origin: number,
): { ids: number[]; places: StoredPlace[] } | undefined {
  const ranges = arrayElementRanges(bytes, bodyStart, bodyEnd);
  if (ranges === undefined) return undefined;
  const ids: number[] = [];
  const places: StoredPlace[] = [];
  for (let index = 0; index < ranges.length; index += 2) {
    const start = ranges[index] as number;
    const end = ranges[index + 1] as number;
    let update: unknown;
    try {
      update = JSON.parse(bytes.toString("utf8", start, end));
    } catch {
      return undefined;
    }
    const id = (update as { update_id?: unknown } | null)?.update_id;
    if (!isNonNegativeInteger(id)) return undefined;
    ids.push(id);
    places.push(new StoredPlace(origin + start, end - start));
  }
  return { ids, places };
}

/** Reads the records of a log file up to `end`, front to back, a chunk at a time. */
export class LogReader {
  readonly #handle: FileHandle;
  readonly #end: number;
  #buffer = Buffer.alloc(0);
  /** The file offset of `#buffer[0]`. */
  #start = 0;

  /** @param end - where the log ends (its size, or where the part to trust ends). */
  constructor(handle: FileHandle, end: number) {
    this.#handle = handle;
    this.#end = end;
  }

  /** The first `length` bytes (fewer when the log is shorter). */
  async head(length: number): Promise<Buffer> {
    const at = await this.#cover(0, length);
    return this.#buffer.subarray(at, at + Math.min(length, this.#end));
  }

  /** The record at `offset`, or what is wrong with the bytes there. */
  async step(offset: number): Promise<LogStep> {
    let at = await this.#cover(offset, RECORD_HEADER_BYTES);
    const available = (): number => this.#buffer.length - at;
    if (available() >= RECORD_HEADER_BYTES) {
      const payloadLength = this.#buffer.readUInt32LE(at);
      if (payloadLength > 0 && payloadLength <= MAX_RECORD_BYTES) {
        at = await this.#cover(offset, RECORD_HEADER_BYTES + payloadLength);
      }
    }
    // The buffer now holds the whole frame, or everything up to the end of the log.
    const bytes = this.#buffer.subarray(0, Math.min(this.#buffer.length, at + this.#end - offset));
    const frame = frameAt(bytes, at);
    if (frame.ok === false) return { kind: "damage", damage: frame.damage };
    const payloadLength = bytes.readUInt32LE(at);
    const end = offset + RECORD_HEADER_BYTES + payloadLength;
    if (bytes[at + RECORD_HEADER_BYTES] === APPEND_TYPE) {
      const bodyStart = at + RECORD_HEADER_BYTES + 1;
      const placed = placedUpdates(
        bytes,
        bodyStart,
        at + RECORD_HEADER_BYTES + payloadLength,
        offset - at,
      );
      return placed === undefined
        ? { kind: "damage", damage: "unreadable" }
        : { kind: "append", end, ...placed };
    }
    const read = readRecord(bytes, at);
    return read.ok
      ? { kind: "record", end, record: read.record }
      : { kind: "damage", damage: read.damage };
  }

  /** Every byte from `offset` to the end, for a look past damage (rare: it may be large). */
  async rest(offset: number): Promise<Buffer> {
    const at = await this.#cover(offset, this.#end - offset);
    return this.#buffer.subarray(at, at + this.#end - offset);
  }

  /**
   * Makes the buffer hold bytes `[offset, offset + length)`, or up to the end of the log when it
   * is shorter; returns where `offset` is in the buffer.
   */
  async #cover(offset: number, length: number): Promise<number> {
    const want = Math.min(offset + length, this.#end);
    if (offset >= this.#start && want <= this.#start + this.#buffer.length) {
      return offset - this.#start;
    }
    const size = Math.min(Math.max(CHUNK_BYTES, want - offset), this.#end - offset);
    const buffer = size <= this.#buffer.length ? this.#buffer : Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const { bytesRead } = await this.#handle.read(buffer, read, size - read, offset + read);
      if (bytesRead === 0) break; // the file is shorter than it was said to be
      read += bytesRead;
    }
    this.#buffer = buffer.subarray(0, read);
    this.#start = offset;
    return 0;
  }
}

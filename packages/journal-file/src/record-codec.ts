// The journal's on-disk framing: a file header, then records of [length][crc32][type][JSON body],
// so that a torn or corrupted record is recognised when the log is read back.

import { crc32 } from "node:zlib";
import type { Update } from "@grammyjs/types";
import type { JournalStateValue } from "@telepace/update-dispatch";

/** The first bytes of every journal file: a magic string and the format version (1). */
export const FILE_HEADER: Buffer = Buffer.from("TPJRNL\u0000\u0001", "latin1");

/** Bytes before a record's payload: u32 LE payload length, u32 LE CRC-32. */
export const RECORD_HEADER_BYTES = 8;

/** The largest payload a record may have; a longer length field is damage, not data. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** A set of stored update ids, as sorted disjoint inclusive ranges. */
export type IdRanges = readonly (readonly [number, number])[];

/** One entry of the log. */
export type JournalRecord =
  /** The start of a (re)written log: what the records dropped by compaction still imply. */
  | {
      readonly type: "base";
      readonly highestUpdateId: number | undefined;
      readonly seen: IdRanges;
    }
  | { readonly type: "append"; readonly updates: readonly Update[] }
  | { readonly type: "finish"; readonly updateIds: readonly number[] }
  | { readonly type: "put"; readonly key: string; readonly value: JournalStateValue }
  | { readonly type: "delete"; readonly key: string }
  /**
   * Every byte before `durableEnd` was covered by a completed fdatasync when this was written:
   * damage there is not a crash's doing (see `recoverLog`).
   */
  | { readonly type: "synced"; readonly durableEnd: number };

const typeCodes = { base: 1, append: 2, finish: 3, put: 4, delete: 5, synced: 6 } as const;

/** The type byte of an append record (see `append-frame.ts`). */
export const APPEND_TYPE = typeCodes.append;

function bodyOf(record: JournalRecord): unknown {
  switch (record.type) {
    case "base":
      return { highestUpdateId: record.highestUpdateId ?? null, seen: record.seen };
    case "append":
      return record.updates;
    case "finish":
      return record.updateIds;
    case "put":
      return [record.key, record.value];
    case "delete":
      return record.key;
    case "synced":
      return record.durableEnd;
  }
}

function checksum(frame: Buffer, payloadLength: number): number {
  const length = frame.subarray(0, 4);
  const payload = frame.subarray(RECORD_HEADER_BYTES, RECORD_HEADER_BYTES + payloadLength);
  return crc32(payload, crc32(length));
}

/**
 * A frame for a payload of `payloadLength` bytes (its type byte included), with the header and
 * the type written; the caller writes the body after the type byte, then {@link sealFrame}s it.
 * Throws a `RangeError` when the payload is larger than {@link MAX_RECORD_BYTES}.
 */
export function allocateFrame(type: number, payloadLength: number): Buffer {
  if (payloadLength > MAX_RECORD_BYTES) {
    throw new RangeError(
      `Expected a journal record of at most ${MAX_RECORD_BYTES} bytes, got ${payloadLength}`,
    );
  }
  const frame = Buffer.allocUnsafe(RECORD_HEADER_BYTES + payloadLength);
  frame.writeUInt32LE(payloadLength, 0);
  frame.writeUInt8(type, RECORD_HEADER_BYTES);
  return frame;
}

/** Writes the checksum of a frame whose body is complete. */
export function sealFrame(frame: Buffer): Buffer {
  frame.writeUInt32LE(checksum(frame, frame.readUInt32LE(0)), 4);
  return frame;
}

/**
 * Frames one record. Throws a `RangeError` when it is larger than {@link MAX_RECORD_BYTES}, and
 * whatever `JSON.stringify` throws (a BigInt, a cycle) — before anything is written.
 */
export function encodeRecord(record: JournalRecord): Buffer {
  const body = JSON.stringify(bodyOf(record));
  const frame = allocateFrame(typeCodes[record.type], 1 + Buffer.byteLength(body));
  frame.write(body, RECORD_HEADER_BYTES + 1, "utf8");
  return sealFrame(frame);
}

/** Why the bytes at an offset are not a record. */
export type DamageKind =
  /** The frame runs past the end of the file: a write that did not finish. */
  | "incomplete"
  /** The length field is 0 or larger than {@link MAX_RECORD_BYTES}. */
  | "bad-length"
  /** The checksum does not match the bytes. */
  | "checksum"
  /** The checksum matches but the content is not a record this version writes. */
  | "unreadable";

/** One step of reading a log: a record and where the next one starts, or damage. */
export type ReadStep =
  | { readonly ok: true; readonly record: JournalRecord; readonly end: number }
  | { readonly ok: false; readonly damage: DamageKind };

/** Whether `value` is a safe integer >= 0 (an update id, an offset). */
export function isNonNegativeInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function isRanges(value: unknown): value is IdRanges {
  return (
    Array.isArray(value) &&
    value.every(
      (range) =>
        Array.isArray(range) &&
        range.length === 2 &&
        isNonNegativeInteger(range[0]) &&
        isNonNegativeInteger(range[1]) &&
        range[0] <= range[1],
    )
  );
}

function decodeBody(type: number, body: unknown): JournalRecord | undefined {
  switch (type) {
    case typeCodes.base: {
      const base = body as { highestUpdateId?: unknown; seen?: unknown } | null;
      const highest = base?.highestUpdateId;
      if (typeof base !== "object" || base === null || !isRanges(base.seen)) return undefined;
      if (highest !== null && !isNonNegativeInteger(highest)) return undefined;
      return { type: "base", highestUpdateId: highest ?? undefined, seen: base.seen };
    }
    case typeCodes.append: {
      const valid =
        Array.isArray(body) &&
        body.every(
          (update) =>
            typeof update === "object" &&
            update !== null &&
            isNonNegativeInteger((update as { update_id?: unknown }).update_id),
        );
      return valid ? { type: "append", updates: body as Update[] } : undefined;
    }
    case typeCodes.finish:
      return Array.isArray(body) && body.every(isNonNegativeInteger)
        ? { type: "finish", updateIds: body }
        : undefined;
    case typeCodes.put:
      return Array.isArray(body) && body.length === 2 && typeof body[0] === "string"
        ? { type: "put", key: body[0], value: body[1] as JournalStateValue }
        : undefined;
    case typeCodes.delete:
      return typeof body === "string" ? { type: "delete", key: body } : undefined;
    case typeCodes.synced:
      return isNonNegativeInteger(body) ? { type: "synced", durableEnd: body } : undefined;
    default:
      return undefined;
  }
}

/** Whether a frame with a plausible length and a matching checksum starts at `offset`. */
export function frameAt(bytes: Buffer, offset: number): ReadStep | { readonly ok: "frame" } {
  if (bytes.length - offset < RECORD_HEADER_BYTES) return { ok: false, damage: "incomplete" };
  const payloadLength = bytes.readUInt32LE(offset);
  if (payloadLength === 0 || payloadLength > MAX_RECORD_BYTES) {
    return { ok: false, damage: "bad-length" };
  }
  if (bytes.length - offset - RECORD_HEADER_BYTES < payloadLength) {
    return { ok: false, damage: "incomplete" };
  }
  const frame = bytes.subarray(offset);
  if (checksum(frame, payloadLength) !== bytes.readUInt32LE(offset + 4)) {
    return { ok: false, damage: "checksum" };
  }
  return { ok: "frame" };
}

/** Reads the record at `offset` of `bytes`. */
export function readRecord(bytes: Buffer, offset: number): ReadStep {
  const frame = frameAt(bytes, offset);
  if (frame.ok !== "frame") return frame;
  const payloadLength = bytes.readUInt32LE(offset);
  const start = offset + RECORD_HEADER_BYTES;
  const end = start + payloadLength;
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString("utf8", start + 1, end));
  } catch {
    return { ok: false, damage: "unreadable" };
  }
  const record = decodeBody(bytes.readUInt8(start), body);
  return record === undefined ? { ok: false, damage: "unreadable" } : { ok: true, record, end };
}

/** The first offset after `from` where an intact frame (plausible length, matching CRC) starts. */
export function findIntactFrameAfter(bytes: Buffer, from: number): number | undefined {
  for (let offset = from + 1; offset + RECORD_HEADER_BYTES < bytes.length; offset++) {
    if (frameAt(bytes, offset).ok === "frame") return offset;
  }
  return undefined;
}

/**
 * Whether an intact record after the damage at `damagedAt` says a completed sync covered it, and
 * where. A crash can only damage bytes no sync had covered yet; damage a sync had covered is
 * corruption of synced data. `bytes` starts at file offset `origin` (offsets in and out are
 * file offsets).
 */
export function findSyncCovering(bytes: Buffer, damagedAt: number, origin = 0): number | undefined {
  let offset = findIntactFrameAfter(bytes, damagedAt - origin);
  while (offset !== undefined) {
    const step = readRecord(bytes, offset);
    if (!step.ok) {
      offset = findIntactFrameAfter(bytes, offset);
      continue;
    }
    if (step.record.type === "synced" && step.record.durableEnd > damagedAt) return origin + offset;
    offset = step.end;
  }
  return undefined;
}

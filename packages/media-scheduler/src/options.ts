// Registry options: their defaults in one frozen object, and the validation that turns user input
// into the resolved limits every scheduler reads.

import {
  type Clock,
  checkObject,
  checkOptionalNumber,
  checkOptions,
  closestName,
  describeValue,
  type Logger,
} from "@telepace/core";
import { mediaChargeUnitBytes } from "./charge.js";
import type { MediaDirection } from "./kinds.js";

/** The per-direction limits of every scheduler of that direction. */
export interface MediaDirectionLimits {
  /**
   * Byte budget per data centre: the sum of the charges of live permits never grows past it.
   * Bytes, an integer >= 65536 (one charge unit).
   */
  readonly maxBytesInFlight?: number | undefined;
  /**
   * How many small transfers may be active (hold a permit or a place in the grant rotation) at
   * once per data centre. An integer >= 1, or `Infinity` for no cap.
   */
  readonly maxActiveSmallTransfers?: number | undefined;
  /**
   * How many large transfers (known size >= `largeTransferThresholdBytes`, or unknown size) may
   * be active at once per data centre. An integer >= 1, or `Infinity` for no cap.
   */
  readonly maxActiveLargeTransfers?: number | undefined;
  /**
   * Bytes that large transfers may hold together per data centre; small transfers may use the
   * rest of `maxBytesInFlight`, so they never wait behind large ones for bytes, and large
   * transfers keep the link busy without filling it with their own requests. A large request is
   * granted whenever no large bytes are live, so one larger than this still goes through.
   * Bytes, an integer >= 65536, or `Infinity` for no separate cap (the whole budget).
   */
  readonly maxLargeBytesInFlight?: number | undefined;
}

/** Limits that {@link MediaSchedulerRegistry.configure} can change while transfers run. */
export interface MediaSchedulerLimits {
  /**
   * Download limits.
   * @defaultValue `{ maxBytesInFlight: 16 MiB, maxActiveSmallTransfers: Infinity, maxActiveLargeTransfers: Infinity, maxLargeBytesInFlight: 4 MiB }`
   */
  readonly download?: MediaDirectionLimits | undefined;
  /**
   * Upload limits.
   * @defaultValue `{ maxBytesInFlight: 8 MiB, maxActiveSmallTransfers: Infinity, maxActiveLargeTransfers: Infinity, maxLargeBytesInFlight: Infinity }`
   */
  readonly upload?: MediaDirectionLimits | undefined;
  /**
   * While a background request waits, at most this many foreground grants are made before a
   * background one; an integer >= 1. @defaultValue 8
   */
  readonly backgroundGrantInterval?: number | undefined;
  /**
   * Bound on acquires waiting across the whole registry; one more is rejected with
   * `ERR_QUEUE_FULL`. An integer >= 1. @defaultValue 16384
   */
  readonly maxQueuedAcquires?: number | undefined;
}

/** Options of the {@link MediaSchedulerRegistry} constructor. */
export interface MediaSchedulerRegistryOptions extends MediaSchedulerLimits {
  /**
   * Transfers whose `sizeBytes` is at least this (or unknown) are large. Bytes, an integer >= 1.
   * Fixed for the registry's life: a transfer's class is decided when it opens.
   * @defaultValue 20971520 (20 MiB)
   */
  readonly largeTransferThresholdBytes?: number | undefined;
  /** Time source for wait and hold durations in events. @defaultValue `systemClock` */
  readonly clock?: Clock | undefined;
  /**
   * A pino-compatible logger (`debug`, `info`, `warn`, `error`): debug lines for schedulers
   * created and evicted and for rebinds, a warning when `configure()` rejects waiting acquires.
   * A logger that throws or returns a rejected promise is ignored. @defaultValue none
   */
  readonly logger?: Logger | undefined;
}

/** Resolved limits of one direction (every field present). */
export interface ResolvedDirectionLimits {
  readonly maxBytesInFlight: number;
  readonly maxActiveSmallTransfers: number;
  readonly maxActiveLargeTransfers: number;
  readonly maxLargeBytesInFlight: number;
}

/** Resolved registry limits: every field present (see {@link MediaSchedulerRegistry.limits}). */
export interface ResolvedLimits {
  readonly download: ResolvedDirectionLimits;
  readonly upload: ResolvedDirectionLimits;
  readonly backgroundGrantInterval: number;
  readonly maxQueuedAcquires: number;
}

/**
 * The defaults of every option: the original scheduler's byte budgets, plus telepace's own queue
 * bound and the 4 MiB that large downloads may hold together. Downloads have no slot caps (the
 * original's were 5 small + 2 large): the byte budget already bounds what is in flight, and on a
 * link with round trips, transfers waiting for a slot left small files queued and the link idle.
 */
export const mediaSchedulerDefaults = Object.freeze({
  download: Object.freeze({
    maxBytesInFlight: 16 * 1024 * 1024,
    maxActiveSmallTransfers: Number.POSITIVE_INFINITY,
    maxActiveLargeTransfers: Number.POSITIVE_INFINITY,
    maxLargeBytesInFlight: 4 * 1024 * 1024,
  }),
  upload: Object.freeze({
    maxBytesInFlight: 8 * 1024 * 1024,
    maxActiveSmallTransfers: Number.POSITIVE_INFINITY,
    maxActiveLargeTransfers: Number.POSITIVE_INFINITY,
    maxLargeBytesInFlight: Number.POSITIVE_INFINITY,
  }),
  largeTransferThresholdBytes: 20 * 1024 * 1024,
  backgroundGrantInterval: 8,
  maxQueuedAcquires: 16_384,
}) satisfies ResolvedLimits & { largeTransferThresholdBytes: number };

// An integer >= min, or Infinity for "no cap".
function checkCap(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (value === Number.POSITIVE_INFINITY) return value;
  const message = `Expected \`${name}\` to be an integer >= ${min} or Infinity, got ${describeValue(value)}`;
  if (typeof value !== "number") throw new TypeError(message);
  if (!Number.isSafeInteger(value) || value < min) throw new RangeError(message);
  return value;
}

const directionKeys = [
  "maxBytesInFlight",
  "maxActiveSmallTransfers",
  "maxActiveLargeTransfers",
  "maxLargeBytesInFlight",
] as const;

/** The keys `configure()` takes. @internal */
export const limitKeys = [
  "download",
  "upload",
  "backgroundGrantInterval",
  "maxQueuedAcquires",
] as const;

/** The keys the registry constructor takes. @internal */
export const registryOptionKeys = [
  ...limitKeys,
  "largeTransferThresholdBytes",
  "clock",
  "logger",
] as const;

/**
 * Checks an options object whole: not an object, or a key outside `known`, is a `TypeError`
 * naming the closest valid key — a per-direction key given at the top (`maxBytesInFlight`) points
 * into `download`/`upload`. @internal
 */
export function checkKeys(
  name: string,
  value: unknown,
  known: readonly string[],
): Readonly<Record<string, unknown>> {
  if (value !== undefined) {
    for (const key of Object.keys(checkObject(name, value))) {
      if (known.includes(key)) continue;
      const near = closestName(key, directionKeys);
      if (near === undefined) continue;
      throw new TypeError(
        `Unknown option \`${key}\` in \`${name}\` (did you mean \`download.${near}\` or \`upload.${near}\`?)`,
      );
    }
  }
  return checkOptions(name, value, known);
}

function resolveDirection(
  direction: MediaDirection,
  input: unknown,
  base: ResolvedDirectionLimits,
): ResolvedDirectionLimits {
  if (input === undefined) return base;
  const limits = checkOptions(direction, input, directionKeys);
  return Object.freeze({
    maxBytesInFlight: checkOptionalNumber(
      `${direction}.maxBytesInFlight`,
      limits.maxBytesInFlight,
      base.maxBytesInFlight,
      { integer: true, min: mediaChargeUnitBytes },
    ),
    maxActiveSmallTransfers: checkCap(
      `${direction}.maxActiveSmallTransfers`,
      limits.maxActiveSmallTransfers,
      base.maxActiveSmallTransfers,
      1,
    ),
    maxActiveLargeTransfers: checkCap(
      `${direction}.maxActiveLargeTransfers`,
      limits.maxActiveLargeTransfers,
      base.maxActiveLargeTransfers,
      1,
    ),
    maxLargeBytesInFlight: checkCap(
      `${direction}.maxLargeBytesInFlight`,
      limits.maxLargeBytesInFlight,
      base.maxLargeBytesInFlight,
      mediaChargeUnitBytes,
    ),
  });
}

/**
 * Validates the limits in `limits` (already checked for unknown keys) against `base` and returns
 * the merged result. Throws before anything is applied, so a bad update changes nothing.
 * @internal
 */
export function resolveLimits(
  limits: Readonly<Record<string, unknown>>,
  base: ResolvedLimits,
): ResolvedLimits {
  return Object.freeze({
    download: resolveDirection("download", limits.download, base.download),
    upload: resolveDirection("upload", limits.upload, base.upload),
    backgroundGrantInterval: checkOptionalNumber(
      "backgroundGrantInterval",
      limits.backgroundGrantInterval,
      base.backgroundGrantInterval,
      { integer: true, min: 1 },
    ),
    maxQueuedAcquires: checkOptionalNumber(
      "maxQueuedAcquires",
      limits.maxQueuedAcquires,
      base.maxQueuedAcquires,
      { integer: true, min: 1 },
    ),
  });
}

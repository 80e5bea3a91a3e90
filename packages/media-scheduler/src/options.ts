// Registry options: their defaults in one frozen object, and the validation that turns user input
// into the resolved limits every scheduler reads.

import { type Clock, checkNumber } from "@telepace/core";
import type { MediaDirection } from "./kinds.js";

/** Every charge is rounded up to a whole number of these units (64 KiB). */
export const mediaChargeUnitBytes = 64 * 1024;

/** The per-direction limits of every scheduler of that direction. */
export interface MediaDirectionLimits {
  /**
   * Byte budget per data centre: the sum of the charges of live permits never grows past it.
   * Bytes, an integer >= 65536 (one charge unit).
   */
  readonly maxBytesInFlight?: number;
  /**
   * How many small transfers may be active (hold a permit or a place in the grant rotation) at
   * once per data centre. An integer >= 1, or `Infinity` for no cap.
   */
  readonly maxActiveSmallTransfers?: number;
  /**
   * How many large transfers (known size >= `largeTransferThresholdBytes`, or unknown size) may
   * be active at once per data centre. An integer >= 1, or `Infinity` for no cap.
   */
  readonly maxActiveLargeTransfers?: number;
}

/** Limits that {@link MediaSchedulerRegistry.configure} can change while transfers run. */
export interface MediaSchedulerLimits {
  /**
   * Download limits.
   * @defaultValue `{ maxBytesInFlight: 16 MiB, maxActiveSmallTransfers: 5, maxActiveLargeTransfers: 2 }`
   */
  readonly download?: MediaDirectionLimits;
  /**
   * Upload limits.
   * @defaultValue `{ maxBytesInFlight: 8 MiB, maxActiveSmallTransfers: Infinity, maxActiveLargeTransfers: Infinity }`
   */
  readonly upload?: MediaDirectionLimits;
  /**
   * While a background request waits, at most this many foreground grants are made before a
   * background one; an integer >= 1. @defaultValue 8
   */
  readonly backgroundGrantInterval?: number;
  /**
   * Bound on acquires waiting across the whole registry; one more is rejected with
   * `ERR_QUEUE_FULL`. An integer >= 1. @defaultValue 16384
   */
  readonly maxQueuedAcquires?: number;
}

/** A pino-compatible logger (only the two levels the scheduler uses). */
export interface MediaSchedulerLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/** Options of the {@link MediaSchedulerRegistry} constructor. */
export interface MediaSchedulerRegistryOptions extends MediaSchedulerLimits {
  /**
   * Transfers whose `sizeBytes` is at least this (or unknown) are large. Bytes, an integer >= 1.
   * Fixed for the registry's life: a transfer's class is decided when it opens.
   * @defaultValue 20971520 (20 MiB)
   */
  readonly largeTransferThresholdBytes?: number;
  /** Time source for wait and hold durations in events. @defaultValue `systemClock` */
  readonly clock?: Clock;
  /** Receives debug lines (scheduler created/evicted, rebinds) and warnings. @defaultValue none */
  readonly logger?: MediaSchedulerLogger;
}

/** Resolved limits of one direction (every field present). */
export interface ResolvedDirectionLimits {
  readonly maxBytesInFlight: number;
  readonly maxActiveSmallTransfers: number;
  readonly maxActiveLargeTransfers: number;
}

/** Resolved registry limits: every field present (see {@link MediaSchedulerRegistry.limits}). */
export interface ResolvedLimits {
  readonly download: ResolvedDirectionLimits;
  readonly upload: ResolvedDirectionLimits;
  readonly backgroundGrantInterval: number;
  readonly maxQueuedAcquires: number;
}

/** The defaults of every option, as the seed states them (the queue bound is telepace's own). */
export const mediaSchedulerDefaults = Object.freeze({
  download: Object.freeze({
    maxBytesInFlight: 16 * 1024 * 1024,
    maxActiveSmallTransfers: 5,
    maxActiveLargeTransfers: 2,
  }),
  upload: Object.freeze({
    maxBytesInFlight: 8 * 1024 * 1024,
    maxActiveSmallTransfers: Number.POSITIVE_INFINITY,
    maxActiveLargeTransfers: Number.POSITIVE_INFINITY,
  }),
  largeTransferThresholdBytes: 20 * 1024 * 1024,
  backgroundGrantInterval: 8,
  maxQueuedAcquires: 16_384,
}) satisfies ResolvedLimits & { largeTransferThresholdBytes: number };

function checkObject(name: string, value: unknown): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null) {
    throw new TypeError(`Expected \`${name}\` to be an object, got ${String(value)}`);
  }
  return value as Record<string, unknown>;
}

function checkSlotLimit(name: string, value: unknown): number {
  if (value === Number.POSITIVE_INFINITY) return value;
  const message = `Expected \`${name}\` to be an integer >= 1 or Infinity, got ${String(value)}`;
  if (typeof value !== "number") throw new TypeError(message);
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(message);
  return value;
}

function resolveDirection(
  direction: MediaDirection,
  input: unknown,
  base: ResolvedDirectionLimits,
): ResolvedDirectionLimits {
  const limits = checkObject(direction, input);
  if (limits === undefined) return base;
  const {
    maxBytesInFlight = base.maxBytesInFlight,
    maxActiveSmallTransfers = base.maxActiveSmallTransfers,
    maxActiveLargeTransfers = base.maxActiveLargeTransfers,
  } = limits;
  return Object.freeze({
    maxBytesInFlight: checkNumber(`${direction}.maxBytesInFlight`, maxBytesInFlight, {
      integer: true,
      min: mediaChargeUnitBytes,
    }),
    maxActiveSmallTransfers: checkSlotLimit(
      `${direction}.maxActiveSmallTransfers`,
      maxActiveSmallTransfers,
    ),
    maxActiveLargeTransfers: checkSlotLimit(
      `${direction}.maxActiveLargeTransfers`,
      maxActiveLargeTransfers,
    ),
  });
}

/**
 * Validates a (partial) limits object against `base` and returns the merged result. Throws
 * before anything is applied, so a bad update changes nothing. @internal
 */
export function resolveLimits(input: unknown, base: ResolvedLimits): ResolvedLimits {
  const limits = checkObject("options", input) ?? {};
  const {
    backgroundGrantInterval = base.backgroundGrantInterval,
    maxQueuedAcquires = base.maxQueuedAcquires,
  } = limits;
  return Object.freeze({
    download: resolveDirection("download", limits.download, base.download),
    upload: resolveDirection("upload", limits.upload, base.upload),
    backgroundGrantInterval: checkNumber("backgroundGrantInterval", backgroundGrantInterval, {
      integer: true,
      min: 1,
    }),
    maxQueuedAcquires: checkNumber("maxQueuedAcquires", maxQueuedAcquires, {
      integer: true,
      min: 1,
    }),
  });
}

// The options of FileUpdateJournal.open, their defaults in one frozen object, and their checking.

import {
  type Clock,
  checkClock,
  checkLogger,
  checkOptionalNumber,
  checkOptions,
  type Logger,
  systemClock,
} from "@telepace/core";

/** Options of {@link FileUpdateJournal.open}. */
export interface FileUpdateJournalOptions {
  /**
   * Log size in bytes past which the journal rewrites itself down to its live records. It
   * compacts when the log is at least this big *and* at least twice its size after the last
   * compaction (so a large live set does not compact on every write). `Infinity` turns automatic
   * compaction off; `compact()` still works.
   *
   * Integer >= 1, or `Infinity`. @defaultValue 16 MiB (16777216)
   */
  readonly compactAfterBytes?: number;
  /**
   * How far below `highestUpdateId` (in update ids) stored ids are remembered exactly. An id at
   * or below `highestUpdateId - dedupeHorizon` counts as a duplicate without a lookup: within one
   * numbering Telegram does not send an update that far below one it delivered (a new numbering
   * starts with `restartIds()`). Memory is one range per gap in the ids within the horizon
   * (Telegram's ids are consecutive, so usually one range).
   *
   * Integer >= 0. @defaultValue 100000
   */
  readonly dedupeHorizon?: number;
  /** Where recovery, compaction and failures are logged (pino-compatible). @defaultValue none */
  readonly logger?: Logger;
  /**
   * Times the back-off between attempts to resume after a failed write (see the README's
   * "A failed write or sync"); tests pass a `ManualClock`. @defaultValue the system clock
   */
  readonly clock?: Clock;
}

/** The defaults of {@link FileUpdateJournalOptions}. */
export const fileUpdateJournalDefaults = Object.freeze({
  compactAfterBytes: 16 * 1024 * 1024,
  dedupeHorizon: 100_000,
});

/** The checked, defaulted options. */
export interface ResolvedOptions {
  readonly compactAfterBytes: number;
  readonly dedupeHorizon: number;
  readonly logger: Logger;
  readonly clock: Clock;
}

const known = ["compactAfterBytes", "dedupeHorizon", "logger", "clock"] as const;

/** Checks the options whole (unknown keys, types, ranges) and fills in the defaults. */
export function resolveOptions(options: unknown): ResolvedOptions {
  const given = checkOptions("options", options, known);
  const compactAfterBytes =
    given.compactAfterBytes === Number.POSITIVE_INFINITY
      ? Number.POSITIVE_INFINITY
      : checkOptionalNumber(
          "compactAfterBytes",
          given.compactAfterBytes,
          fileUpdateJournalDefaults.compactAfterBytes,
          { integer: true, min: 1 },
        );
  const dedupeHorizon = checkOptionalNumber(
    "dedupeHorizon",
    given.dedupeHorizon,
    fileUpdateJournalDefaults.dedupeHorizon,
    { integer: true, min: 0 },
  );
  return {
    compactAfterBytes,
    dedupeHorizon,
    logger: checkLogger(given.logger),
    clock: checkClock(given.clock, systemClock),
  };
}

// The options of UpdateIntake: its polling options (shared with every poller), its bounds and
// defaults in one frozen object, and their validation, checked whole at construction.

import {
  type Clock,
  checkClock,
  checkLogger,
  checkMethods,
  checkObject,
  checkOptionalNumber,
  checkOptions,
  type Logger,
  systemClock,
} from "@telepace/core";
import { type UpdateDispatcherOptions, updateDispatcherDefaults } from "../dispatcher/options.js";
import type { UpdateJournal } from "../journal/update-journal.js";
import {
  MAX_TIMER_DELAY_MS,
  POLLING_OPTION_NAMES,
  type PollingOptions,
  pollingDefaults,
  type ResolvedPollingOptions,
  resolvePollingOptions,
} from "./polling-options.js";

/**
 * The dispatcher options an intake passes on. The intake sets the clock, logger and deadline, and
 * its journal decides what is a duplicate (so there is no `dedupeWindow`: set the journal's).
 */
export type IntakeDispatcherOptions = Omit<
  UpdateDispatcherOptions,
  "clock" | "logger" | "closeTimeoutMs" | "dedupeWindow"
>;

/**
 * Options of the {@link UpdateIntake} constructor. The polling options ({@link PollingOptions}:
 * `getUpdates`, `pollLimit`, `pollTimeoutSeconds`, `allowedUpdates`, `maxRetryAfterMs`,
 * `journalFailure`) are needed by `run()` only; a webhook intake has no `getUpdates`.
 */
export interface UpdateIntakeOptions extends PollingOptions {
  /**
   * Where updates are stored between fetching and finishing. Given a journal, the intake uses it
   * but does not close it; without one it creates (and closes) a {@link MemoryUpdateJournal},
   * which a crash loses.
   * @defaultValue a new MemoryUpdateJournal
   */
  readonly journal?: UpdateJournal | undefined;
  /** Bounds and timeout of the dispatcher the intake builds; see {@link UpdateDispatcherOptions}. */
  readonly dispatcher?: IntakeDispatcherOptions | undefined;
  /**
   * How many stored updates may be unfinished at once. At the bound the intake stops fetching
   * (and `accept` answers `busy`) until processing brings it below; nothing is dropped. Memory
   * is bounded by this many updates (in the journal and the dispatcher). Integer >= 1.
   * @defaultValue 1000
   */
  readonly maxUnfinished?: number | undefined;
  /**
   * Milliseconds `close()` (and `[Symbol.asyncDispose]`) lets running updates finish when no
   * `timeoutMs` is passed to it. Integer 0–2147483647.
   * @defaultValue 10000
   */
  readonly closeTimeoutMs?: number | undefined;
  /** Time source for backoff, 429 waits and deadlines. @defaultValue systemClock */
  readonly clock?: Clock | undefined;
  /** A pino-compatible logger, also given to the dispatcher. @defaultValue no logging */
  readonly logger?: Logger | undefined;
}

/** Options of {@link UpdateIntake.run}. */
export interface RunOptions {
  /** Aborting stops polling (the dispatcher goes on); `run()` then resolves. */
  readonly signal?: AbortSignal | undefined;
}

/** Options of {@link UpdateIntake.accept}. */
export interface AcceptOptions {
  /** Checked before the update is handed to the journal: an aborted signal rejects with its reason. */
  readonly signal?: AbortSignal | undefined;
}

/** Options of {@link UpdateIntake.close}. */
export interface IntakeCloseOptions {
  /**
   * Milliseconds to let stored updates finish before the rest is left in the journal and running
   * processors are aborted. Integer 0–2147483647.
   * @defaultValue the `closeTimeoutMs` option (10000)
   */
  readonly timeoutMs?: number | undefined;
  /** Aborting ends the grace period early, like the deadline; `close()` still resolves. */
  readonly signal?: AbortSignal | undefined;
}

/** The defaults of {@link UpdateIntakeOptions}. */
export const updateIntakeDefaults = Object.freeze({
  ...pollingDefaults,
  maxUnfinished: 1000,
  closeTimeoutMs: 10_000,
});

const OPTION_NAMES: readonly string[] = Object.freeze([
  ...POLLING_OPTION_NAMES,
  "journal",
  "dispatcher",
  "maxUnfinished",
  "closeTimeoutMs",
  "clock",
  "logger",
]);

const JOURNAL_METHODS: readonly string[] = Object.freeze([
  "append",
  "finish",
  "unfinished",
  "highestUpdateId",
  "restartIds",
  "compact",
  "putState",
  "deleteState",
  "state",
  "snapshot",
  "close",
]);

/** Options the intake sets itself, so the dispatcher must not be given them. */
const INTAKE_OWNED: readonly string[] = Object.freeze(["clock", "logger", "closeTimeoutMs"]);

/** Options after defaults and validation. */
export interface ResolvedIntakeOptions extends ResolvedPollingOptions {
  readonly journal: UpdateJournal | undefined;
  readonly dispatcher: IntakeDispatcherOptions;
  readonly maxUnfinished: number;
  readonly closeTimeoutMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

// Every dispatcher option with a default, and the one without; the UpdateDispatcher checks values.
const DISPATCHER_OPTION_NAMES: readonly string[] = Object.freeze(
  [...Object.keys(updateDispatcherDefaults), "timeoutMs"].filter(
    (name) => !INTAKE_OWNED.includes(name) && name !== "dedupeWindow",
  ),
);

function checkDispatcherOptions(value: unknown): IntakeDispatcherOptions {
  if (value === undefined) return {};
  const given = checkObject("dispatcher", value);
  for (const key of INTAKE_OWNED) {
    if (key in given) {
      throw new TypeError(
        `Unknown option \`${key}\` in \`dispatcher\` (set \`${key}\` on the intake instead)`,
      );
    }
  }
  if ("dedupeWindow" in given) {
    throw new TypeError(
      "Unknown option `dedupeWindow` in `dispatcher` (the intake's journal decides what is a duplicate: set its `dedupeWindow` or `dedupeHorizon`)",
    );
  }
  return checkOptions("dispatcher", given, DISPATCHER_OPTION_NAMES) as IntakeDispatcherOptions;
}

/** Validates a `timeoutMs`-like value: an integer from 0 up to what a timer can hold. */
export function checkIntakeTimeout(name: string, value: unknown, fallback: number): number {
  return checkOptionalNumber(name, value, fallback, {
    integer: true,
    min: 0,
    max: MAX_TIMER_DELAY_MS,
  });
}

/** Applies defaults and validates; throws a TypeError or RangeError naming the bad option. */
export function resolveIntakeOptions(options: unknown): ResolvedIntakeOptions {
  const given = checkOptions("options", options, OPTION_NAMES);
  const defaults = updateIntakeDefaults;
  return {
    ...resolvePollingOptions(given),
    journal: checkMethods<UpdateJournal>("journal", given.journal, JOURNAL_METHODS),
    dispatcher: checkDispatcherOptions(given.dispatcher),
    maxUnfinished: checkOptionalNumber(
      "maxUnfinished",
      given.maxUnfinished,
      defaults.maxUnfinished,
      { integer: true, min: 1 },
    ),
    closeTimeoutMs: checkIntakeTimeout(
      "closeTimeoutMs",
      given.closeTimeoutMs,
      defaults.closeTimeoutMs,
    ),
    clock: checkClock(given.clock, systemClock),
    logger: checkLogger(given.logger),
  };
}

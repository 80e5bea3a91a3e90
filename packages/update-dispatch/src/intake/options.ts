// The options of UpdateIntake: its polling options (shared with every poller), its bounds and
// defaults in one frozen object, and their validation, checked whole at construction.

import {
  type Clock,
  checkClock,
  checkLogger,
  checkMethods,
  checkNumber,
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
  /**
   * Bounds and timeout of the dispatcher the intake builds; see {@link UpdateDispatcherOptions}.
   * One default differs from a bare dispatcher's: `maxConcurrency` is `maxActivePrincipals` when
   * that is given, else 256 (a bare dispatcher: 16). A processor that awaits its reply holds its
   * slot while the outbox paces that chat, so with fewer slots than people writing at once the
   * slots, not Telegram's limits, decide when the last one is answered; memory stays bounded by
   * `maxUnfinished`.
   * @defaultValue `{ maxConcurrency: 256 }` and the dispatcher's other defaults
   */
  readonly dispatcher?: IntakeDispatcherOptions | undefined;
  /**
   * How many unfinished updates the intake holds in memory at once: handed to the dispatcher
   * (queued or running) or being read back from the journal. Beyond it, and beyond what one
   * principal's queue takes (`maxQueuedPerPrincipal` + 1), stored updates wait in the journal
   * and are read back in order when their turn comes: a principal that sends faster than it is
   * served never holds back anybody else's updates. Integer >= 1.
   * @defaultValue 1000
   */
  readonly maxUnfinished?: number | undefined;
  /**
   * How many stored updates may be unfinished at once, in memory or in the journal. At the bound
   * the intake stops fetching and `accept` answers `busy` (a webhook: 503) until processing
   * brings it below; nothing is dropped, Telegram keeps the rest (up to 24 hours). Each costs
   * memory for its id (and a durable journal's index), not its content; with a journal that is
   * not durable (the default `MemoryUpdateJournal`) the content is in memory too, so the default
   * is lower there. Integer >= 1.
   * @defaultValue 100000, or 10000 with a journal whose `snapshot().isDurable` is false
   */
  readonly maxJournalUpdates?: number | undefined;
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
  /**
   * The dispatcher's `maxConcurrency` when neither it nor `maxActivePrincipals` is given (given
   * `maxActivePrincipals`, that number): every active person's current update may run.
   */
  maxConcurrency: 256,
  maxUnfinished: 1000,
  maxJournalUpdates: 100_000,
  closeTimeoutMs: 10_000,
});

/** The default `maxJournalUpdates` with a journal that is not durable: its backlog is in memory. */
export const MEMORY_JOURNAL_MAX_UPDATES = 10_000;

const OPTION_NAMES: readonly string[] = Object.freeze([
  ...POLLING_OPTION_NAMES,
  "journal",
  "dispatcher",
  "maxUnfinished",
  "maxJournalUpdates",
  "closeTimeoutMs",
  "clock",
  "logger",
]);

const JOURNAL_METHODS: readonly string[] = Object.freeze([
  "append",
  "finish",
  "unfinished",
  "unfinishedIds",
  "read",
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
  /** `undefined`: the default, which depends on the journal. */
  readonly maxJournalUpdates: number | undefined;
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
    maxJournalUpdates:
      given.maxJournalUpdates === undefined
        ? undefined
        : checkNumber("maxJournalUpdates", given.maxJournalUpdates, { integer: true, min: 1 }),
    closeTimeoutMs: checkIntakeTimeout(
      "closeTimeoutMs",
      given.closeTimeoutMs,
      defaults.closeTimeoutMs,
    ),
    clock: checkClock(given.clock, systemClock),
    logger: checkLogger(given.logger),
  };
}

// The options of UpdateIntake: the getUpdates contract it polls through, its bounds and defaults
// in one frozen object, and their validation, checked whole at construction.

import type { Update } from "@grammyjs/types";
import {
  type Clock,
  checkClock,
  checkFunction,
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

/** An update type, as `allowed_updates` names it. */
export type AllowedUpdate = Exclude<keyof Update, "update_id">;

/** The parameters the intake passes to `getUpdates` (Bot API names). */
export interface GetUpdatesParams {
  /** The highest stored `update_id` + 1, which confirms everything stored; absent at first. */
  readonly offset?: number;
  /** How many updates to return, 1–100: the configured `pollLimit`, less at the bound. */
  readonly limit: number;
  /** Long-poll timeout in seconds. */
  readonly timeout: number;
  /** The `allowedUpdates` option, when given. */
  readonly allowed_updates?: readonly AllowedUpdate[];
}

/**
 * Calls the Bot API's `getUpdates`. Any transport fits: telepace's
 * `(params, options) => client.getUpdates(params, options)`, grammY's
 * `(params, { signal }) => bot.api.getUpdates(params, signal as GrammySignal)` (its Node build
 * types the signal with the `abort-controller` shim), or a fake in tests. Pass the
 * signal on: the intake aborts it to stop polling. What it throws is read through the fields of
 * {@link GetUpdatesErrorFields}.
 */
export type GetUpdates = (
  params: GetUpdatesParams,
  options: { readonly signal: AbortSignal },
) => Promise<readonly Update[]>;

/** The dispatcher options an intake passes on; the intake sets the clock, logger and deadline. */
export type IntakeDispatcherOptions = Omit<
  UpdateDispatcherOptions,
  "clock" | "logger" | "closeTimeoutMs"
>;

/** Options of the {@link UpdateIntake} constructor. */
export interface UpdateIntakeOptions {
  /** Polls the Bot API; needed by `run()` only (a webhook intake has none). */
  readonly getUpdates?: GetUpdates | undefined;
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
   * `limit` of each `getUpdates` call (fewer when the bound leaves less room). Integer 1–100.
   * @defaultValue 100
   */
  readonly pollLimit?: number | undefined;
  /** `timeout` of each `getUpdates` call: seconds to hold a long poll. Integer 0–50. @defaultValue 30 */
  readonly pollTimeoutSeconds?: number | undefined;
  /** `allowed_updates` of each `getUpdates` call. @defaultValue not sent (Telegram keeps the last) */
  readonly allowedUpdates?: readonly AllowedUpdate[] | undefined;
  /**
   * The longest a 429 stops polling, whatever `retry_after` says; polling then asks again (a
   * read costs nothing but another 429). Integer >= 1000 (the floor of every 429 wait).
   * @defaultValue 60000
   */
  readonly maxRetryAfterMs?: number | undefined;
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
  maxUnfinished: 1000,
  pollLimit: 100,
  pollTimeoutSeconds: 30,
  maxRetryAfterMs: 60_000,
  closeTimeoutMs: 10_000,
});

/** A 429 without `retry_after` waits this long (Telegram's usual answer). */
export const DEFAULT_RETRY_AFTER_MS = 5_000;
/** No 429 wait is shorter: `retry_after: 0` must not turn into a busy loop. */
export const MIN_RETRY_AFTER_MS = 1_000;
/** Backoff after a transient failure: starts here, doubles, resets after a good poll. */
export const BACKOFF_START_MS = 500;
/** The longest backoff after a transient failure. */
export const BACKOFF_MAX_MS = 30_000;

const MAX_TIMER_DELAY_MS = 2_147_483_647;

const OPTION_NAMES: readonly string[] = Object.freeze([
  "getUpdates",
  "journal",
  "dispatcher",
  "maxUnfinished",
  "pollLimit",
  "pollTimeoutSeconds",
  "allowedUpdates",
  "maxRetryAfterMs",
  "closeTimeoutMs",
  "clock",
  "logger",
]);

const JOURNAL_METHODS: readonly string[] = Object.freeze([
  "append",
  "finish",
  "unfinished",
  "highestUpdateId",
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
export interface ResolvedIntakeOptions {
  readonly getUpdates: GetUpdates | undefined;
  readonly journal: UpdateJournal | undefined;
  readonly dispatcher: IntakeDispatcherOptions;
  readonly maxUnfinished: number;
  readonly pollLimit: number;
  readonly pollTimeoutSeconds: number;
  readonly allowedUpdates: readonly AllowedUpdate[] | undefined;
  readonly maxRetryAfterMs: number;
  readonly closeTimeoutMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

// Every dispatcher option with a default, and the one without; the UpdateDispatcher checks values.
const DISPATCHER_OPTION_NAMES: readonly string[] = Object.freeze(
  [...Object.keys(updateDispatcherDefaults), "timeoutMs"].filter(
    (name) => !INTAKE_OWNED.includes(name),
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
  return checkOptions("dispatcher", given, DISPATCHER_OPTION_NAMES) as IntakeDispatcherOptions;
}

function checkAllowedUpdates(value: unknown): readonly AllowedUpdate[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) {
    throw new TypeError("Expected `allowedUpdates` to be an array of update type names");
  }
  return Object.freeze([...value]) as readonly AllowedUpdate[];
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
    getUpdates:
      given.getUpdates === undefined
        ? undefined
        : checkFunction<GetUpdates>("getUpdates", given.getUpdates),
    journal: checkMethods<UpdateJournal>("journal", given.journal, JOURNAL_METHODS),
    dispatcher: checkDispatcherOptions(given.dispatcher),
    maxUnfinished: checkOptionalNumber(
      "maxUnfinished",
      given.maxUnfinished,
      defaults.maxUnfinished,
      { integer: true, min: 1 },
    ),
    pollLimit: checkOptionalNumber("pollLimit", given.pollLimit, defaults.pollLimit, {
      integer: true,
      min: 1,
      max: 100,
    }),
    pollTimeoutSeconds: checkOptionalNumber(
      "pollTimeoutSeconds",
      given.pollTimeoutSeconds,
      defaults.pollTimeoutSeconds,
      { integer: true, min: 0, max: 50 },
    ),
    allowedUpdates: checkAllowedUpdates(given.allowedUpdates),
    maxRetryAfterMs: checkOptionalNumber(
      "maxRetryAfterMs",
      given.maxRetryAfterMs,
      defaults.maxRetryAfterMs,
      { integer: true, min: MIN_RETRY_AFTER_MS, max: MAX_TIMER_DELAY_MS },
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

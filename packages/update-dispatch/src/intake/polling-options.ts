// The options every poller shares (the intake's and any built on PollingLoop): the getUpdates
// contract it polls through, what it asks for, how long a 429 may stop it and what a failed store
// does; their defaults in one frozen object and their validation.

import type { Update } from "@grammyjs/types";
import { checkFunction, checkOptionalNumber } from "@telepace/core";

/** An update type, as `allowed_updates` names it. */
export type AllowedUpdate = Exclude<keyof Update, "update_id">;

/** The parameters a poller passes to `getUpdates` (Bot API names). */
export interface GetUpdatesParams {
  /**
   * The highest stored `update_id` + 1, which confirms everything stored; absent at first, after
   * the ids restarted, and in a short probe (see the README's "Update ids that restart lower").
   */
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
 * signal on: the poller aborts it to stop polling. What it throws is read through the fields of
 * {@link GetUpdatesErrorFields}.
 */
export type GetUpdates = (
  params: GetUpdatesParams,
  options: { readonly signal: AbortSignal },
) => Promise<readonly Update[]>;

/**
 * What polling does when the journal fails to store a fetched batch: `"retry"` keeps it
 * unconfirmed and tries again with back-off; `"reject"` ends `run()` with
 * `ERR_POLLING_JOURNAL_FAILED`.
 */
export type JournalFailurePolicy = "retry" | "reject";

/** The polling options shared by `UpdateIntake` and every poller built on `PollingLoop`. */
export interface PollingOptions {
  /** Calls the Bot API's `getUpdates`. */
  readonly getUpdates?: GetUpdates | undefined;
  /**
   * `limit` of each `getUpdates` call (fewer when the store's bound leaves less room). Integer
   * 1–100.
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
   * What a poller does when its journal (or shared queue) fails to store a fetched batch:
   * `"retry"` keeps the batch unconfirmed (Telegram keeps it too) and offers it to the journal
   * again, 0.5 s doubling to 30 s between tries, until it is stored; `"reject"` makes `run()`
   * reject with `ERR_POLLING_JOURNAL_FAILED`, the journal's error as `cause`.
   * @defaultValue "retry"
   */
  readonly journalFailure?: "retry" | "reject" | undefined;
}

/** The defaults of {@link PollingOptions}. */
export const pollingDefaults = Object.freeze({
  pollLimit: 100,
  pollTimeoutSeconds: 30,
  maxRetryAfterMs: 60_000,
  journalFailure: "retry" as JournalFailurePolicy,
});

/** A 429 without `retry_after` waits this long (Telegram's usual answer). */
export const DEFAULT_RETRY_AFTER_MS = 5_000;
/** No 429 wait is shorter: `retry_after: 0` must not turn into a busy loop. */
export const MIN_RETRY_AFTER_MS = 1_000;
/** Backoff after a transient failure: starts here, doubles, resets after a good poll. */
export const BACKOFF_START_MS = 500;
/** The longest backoff after a transient failure. */
export const BACKOFF_MAX_MS = 30_000;
/** The longest delay a timer can hold. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** Every key of {@link PollingOptions}, for `checkOptions` of the options that include them. */
export const POLLING_OPTION_NAMES: readonly string[] = Object.freeze([
  "getUpdates",
  "pollLimit",
  "pollTimeoutSeconds",
  "allowedUpdates",
  "maxRetryAfterMs",
  "journalFailure",
]);

/** {@link PollingOptions} after defaults and validation. */
export interface ResolvedPollingOptions {
  readonly getUpdates: GetUpdates | undefined;
  readonly pollLimit: number;
  readonly pollTimeoutSeconds: number;
  readonly allowedUpdates: readonly AllowedUpdate[] | undefined;
  readonly maxRetryAfterMs: number;
  readonly journalFailure: JournalFailurePolicy;
}

function checkAllowedUpdates(value: unknown): readonly AllowedUpdate[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) {
    throw new TypeError("Expected `allowedUpdates` to be an array of update type names");
  }
  return Object.freeze([...value]) as readonly AllowedUpdate[];
}

function checkJournalFailure(value: unknown): JournalFailurePolicy {
  if (value === undefined) return pollingDefaults.journalFailure;
  if (value !== "retry" && value !== "reject") {
    throw new TypeError(
      `Expected \`journalFailure\` to be "retry" or "reject", got ${JSON.stringify(value) ?? String(value)}`,
    );
  }
  return value;
}

/**
 * Applies defaults to the polling keys of options whose keys were already checked (with
 * {@link POLLING_OPTION_NAMES} among the known ones); throws a TypeError or RangeError naming the
 * bad option.
 */
export function resolvePollingOptions(
  given: Readonly<Record<string, unknown>>,
): ResolvedPollingOptions {
  const defaults = pollingDefaults;
  return {
    getUpdates:
      given.getUpdates === undefined
        ? undefined
        : checkFunction<GetUpdates>("getUpdates", given.getUpdates),
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
    journalFailure: checkJournalFailure(given.journalFailure),
  };
}

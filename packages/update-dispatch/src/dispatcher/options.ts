// Construction and per-call options of the dispatcher: their defaults in one frozen object and
// their validation, worded like every other telepace package.

import type { Update } from "@grammyjs/types";
import {
  type Clock,
  checkBoolean,
  checkClock,
  checkFunction,
  checkLogger,
  checkNumber,
  checkOptionalNumber,
  checkOptions,
  checkSignal,
  type Logger,
  systemClock,
} from "@telepace/core";

/**
 * Processes one update. It may return a promise; a rejection, a synchronous throw and a throw of a
 * non-Error value are all caught, logged with fixed text and counted, and the update's key goes on
 * with its next update.
 *
 * @param update - the update as it was enqueued.
 * @param signal - aborted when the update's timeout elapses (`reason` is an
 *   `UpdateDispatchError` with code `ERR_UPDATE_TIMEOUT`) or when `close()` gives up waiting
 *   (`ERR_DISPATCHER_CLOSED`). Pass it to every call the processor makes. No other running call
 *   shares it; once this call settled unaborted with no `abort` listener left on the signal, a
 *   later call may get the same signal, so use it only until the processor's promise settles.
 */
export type UpdateProcessor = (update: Update, signal: AbortSignal) => unknown;

/** Options of the {@link UpdateDispatcher} constructor. */
export interface UpdateDispatcherOptions {
  /**
   * How many updates may wait in one principal's queue, not counting the one it is running.
   * Beyond it `enqueue` resolves `{ status: "rejected", reason: "principal-queue-full" }`
   * (or waits, with `wait: true`). Integer >= 1.
   * @defaultValue 32
   */
  readonly maxQueuedPerPrincipal?: number | undefined;
  /**
   * How many principals may have work (queued or running) at once. An update for a new principal
   * beyond it is rejected with `active-principals-full` (or waits, with `wait: true`), while
   * updates for principals already active are still accepted. Integer >= 1.
   * @defaultValue 256
   */
  readonly maxActivePrincipals?: number | undefined;
  /**
   * How many processors may run at once, over all principals. Updates waiting in a principal's
   * queue never hold one of these slots; a free slot takes the principal whose next update was
   * enqueued first. Integer >= 1.
   * @defaultValue 16
   */
  readonly maxConcurrency?: number | undefined;
  /**
   * How many `enqueue(update, { wait: true })` calls may wait for capacity at once. Beyond it the
   * call resolves `{ status: "rejected", reason: "waiting-full" }`. Integer >= 1.
   * @defaultValue 1024
   */
  readonly maxWaitingEnqueues?: number | undefined;
  /**
   * Milliseconds one update may run. When it elapses the processor's signal is aborted, the update
   * counts as finished (`timedOut`), its concurrency slot is freed and its principal goes on with
   * the next update; a result that arrives later is ignored. Finite number > 0 and
   * <= 2147483647, or `undefined` for no timeout.
   * @defaultValue undefined (no timeout, as in a classic per-key dispatcher)
   */
  readonly timeoutMs?: number | undefined;
  /**
   * How many finished update ids are remembered to suppress duplicates (webhook retries, a poller
   * that fetches again from the watermark): a finished id is remembered in the slot `update_id`
   * mod `dedupeWindow` until another id of that slot finishes, so with Telegram's consecutive ids
   * the last `dedupeWindow` ids are. Ids still queued, waiting or running are always suppressed,
   * whatever this is. Integer >= 0 and <= 1048576 (8 bytes a slot, allocated up front); 0
   * remembers none.
   * @defaultValue 4096
   */
  readonly dedupeWindow?: number | undefined;
  /**
   * Milliseconds `close()` (and `[Symbol.asyncDispose]`) waits for accepted work before it gives
   * up, when no `timeoutMs` is passed to it. Integer >= 0 and <= 2147483647.
   * @defaultValue 10000
   */
  readonly closeTimeoutMs?: number | undefined;
  /** Time source for timeouts and diagnostics durations. @defaultValue systemClock */
  readonly clock?: Clock | undefined;
  /**
   * Where failures, timeouts and rejections are logged: any pino-compatible logger (`debug`,
   * `info`, `warn`, `error`). Every call gets fixed text and fixed safe metadata (`updateId`, and
   * `reason` for rejections), never an error or update content; a logger that throws or returns a
   * rejected promise cannot break dispatch. @defaultValue no logging
   */
  readonly logger?: Logger | undefined;
}

/** Options of {@link UpdateDispatcher.enqueue}. */
export interface EnqueueOptions {
  /**
   * Wait for capacity instead of being rejected at the per-principal or active-principal bound.
   * Waiting calls for one principal are accepted in call order, and no later call for that
   * principal overtakes them.
   * @defaultValue false
   */
  readonly wait?: boolean | undefined;
  /**
   * Aborting a waiting call withdraws the update and rejects the call with `signal.reason`; an
   * already aborted signal rejects at once. A withdrawn update holds the watermark below it until
   * its `update_id` is enqueued again.
   */
  readonly signal?: AbortSignal | undefined;
}

/** Options of {@link UpdateDispatcher.drain}. */
export interface DrainOptions {
  /**
   * Milliseconds to wait before resolving `{ status: "timed-out" }`. Integer >= 0 and
   * <= 2147483647, or `undefined` to wait until idle.
   * @defaultValue undefined
   */
  readonly timeoutMs?: number | undefined;
  /** Aborting rejects the drain with `signal.reason`; the dispatcher itself is not affected. */
  readonly signal?: AbortSignal | undefined;
}

/** Options of {@link UpdateDispatcher.close}. */
export interface CloseOptions {
  /**
   * Milliseconds to let accepted updates finish before the unstarted ones are handed back and
   * the running ones are aborted. Integer >= 0 and <= 2147483647; 0 gives up at once.
   * @defaultValue the `closeTimeoutMs` option (10000)
   */
  readonly timeoutMs?: number | undefined;
  /** Aborting ends the grace period early, exactly like the deadline; `close()` still resolves. */
  readonly signal?: AbortSignal | undefined;
}

/** The defaults of {@link UpdateDispatcherOptions}; the first three are the classic per-key dispatcher's bounds. */
export const updateDispatcherDefaults = Object.freeze({
  maxQueuedPerPrincipal: 32,
  maxActivePrincipals: 256,
  maxConcurrency: 16,
  maxWaitingEnqueues: 1024,
  dedupeWindow: 4096,
  closeTimeoutMs: 10_000,
});

/** The most finished-id slots a dispatcher keeps (8 MiB of them). */
const MAX_DEDUPE_WINDOW = 1_048_576;

/** The longest delay a Node timer honours; longer ones fire at once. */
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** Options after defaults and validation. */
export interface ResolvedOptions {
  readonly maxQueuedPerPrincipal: number;
  readonly maxActivePrincipals: number;
  readonly maxConcurrency: number;
  readonly maxWaitingEnqueues: number;
  readonly timeoutMs: number | undefined;
  readonly dedupeWindow: number;
  readonly closeTimeoutMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

const CONSTRUCTOR_KEYS: readonly (keyof UpdateDispatcherOptions)[] = [
  "maxQueuedPerPrincipal",
  "maxActivePrincipals",
  "maxConcurrency",
  "maxWaitingEnqueues",
  "timeoutMs",
  "dedupeWindow",
  "closeTimeoutMs",
  "clock",
  "logger",
];
const ENQUEUE_KEYS: readonly (keyof EnqueueOptions)[] = ["wait", "signal"];
const DEADLINE_KEYS: readonly (keyof DrainOptions & keyof CloseOptions)[] = ["timeoutMs", "signal"];

const POSITIVE = { integer: true, min: 1 } as const;
/** An integer from 0 up to what a Node timer honours. */
const DELAY = { integer: true, min: 0, max: MAX_TIMER_DELAY_MS } as const;

/** Validates the processor. */
export function checkProcessor(processor: unknown): UpdateProcessor {
  return checkFunction<UpdateProcessor>("processor", processor);
}

/**
 * Applies defaults and validates the whole options object: an unknown key, a wrong type or an
 * out-of-range value (`null` included) throws a TypeError or RangeError naming the option.
 */
export function resolveOptions(options: unknown): ResolvedOptions {
  const given = checkOptions("options", options, CONSTRUCTOR_KEYS);
  const defaults = updateDispatcherDefaults;
  return {
    maxQueuedPerPrincipal: checkOptionalNumber(
      "maxQueuedPerPrincipal",
      given.maxQueuedPerPrincipal,
      defaults.maxQueuedPerPrincipal,
      POSITIVE,
    ),
    maxActivePrincipals: checkOptionalNumber(
      "maxActivePrincipals",
      given.maxActivePrincipals,
      defaults.maxActivePrincipals,
      POSITIVE,
    ),
    maxConcurrency: checkOptionalNumber(
      "maxConcurrency",
      given.maxConcurrency,
      defaults.maxConcurrency,
      POSITIVE,
    ),
    maxWaitingEnqueues: checkOptionalNumber(
      "maxWaitingEnqueues",
      given.maxWaitingEnqueues,
      defaults.maxWaitingEnqueues,
      POSITIVE,
    ),
    timeoutMs:
      given.timeoutMs === undefined
        ? undefined
        : checkNumber("timeoutMs", given.timeoutMs, { greaterThan: 0, max: MAX_TIMER_DELAY_MS }),
    dedupeWindow: checkOptionalNumber("dedupeWindow", given.dedupeWindow, defaults.dedupeWindow, {
      integer: true,
      min: 0,
      max: MAX_DEDUPE_WINDOW,
    }),
    closeTimeoutMs: checkOptionalNumber(
      "closeTimeoutMs",
      given.closeTimeoutMs,
      defaults.closeTimeoutMs,
      DELAY,
    ),
    clock: checkClock(given.clock, systemClock),
    logger: checkLogger(given.logger),
  };
}

/** The options of `enqueue`, validated. */
export interface ResolvedEnqueueOptions {
  readonly wait: boolean;
  readonly signal: AbortSignal | undefined;
}

// Shared results for calls without a signal, so the per-update path allocates nothing here.
const NO_WAIT: ResolvedEnqueueOptions = Object.freeze({ wait: false, signal: undefined });
const WAIT: ResolvedEnqueueOptions = Object.freeze({ wait: true, signal: undefined });

/** Validates the options of `enqueue`. */
export function resolveEnqueueOptions(options: unknown): ResolvedEnqueueOptions {
  if (options === undefined) return NO_WAIT;
  const given = checkOptions("options", options, ENQUEUE_KEYS);
  const wait = checkBoolean("wait", given.wait, false);
  const signal = checkSignal("signal", given.signal);
  if (signal === undefined) return wait ? WAIT : NO_WAIT;
  return { wait, signal };
}

/** Validates the options of `drain` and `close`; `timeoutMs` is `fallback` when not given. */
export function resolveDeadlineOptions(
  options: unknown,
  fallback: number | undefined,
): { timeoutMs: number | undefined; signal: AbortSignal | undefined } {
  const given = checkOptions("options", options, DEADLINE_KEYS);
  return {
    timeoutMs:
      given.timeoutMs === undefined ? fallback : checkNumber("timeoutMs", given.timeoutMs, DELAY),
    signal: checkSignal("signal", given.signal),
  };
}

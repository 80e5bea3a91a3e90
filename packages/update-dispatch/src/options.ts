// Construction and per-call options of the dispatcher: their defaults in one frozen object and
// their validation, worded like every other telepace package.

import type { Update } from "@grammyjs/types";
import { type Clock, checkNumber, systemClock } from "@telepace/core";

/**
 * Processes one update. It may return a promise; a rejection, a synchronous throw and a throw of a
 * non-Error value are all caught, logged with fixed text and counted, and the update's key goes on
 * with its next update.
 *
 * @param update - the update as it was enqueued.
 * @param signal - aborted when the update's timeout elapses (`reason` is an
 *   `UpdateDispatchError` with code `ERR_UPDATE_TIMEOUT`) or when `close()` gives up waiting
 *   (`ERR_DISPATCHER_CLOSED`). Pass it to every call the processor makes.
 */
export type UpdateProcessor = (update: Update, signal: AbortSignal) => unknown;

/**
 * The part of a pino-compatible logger the dispatcher uses. Every call gets a fixed message and
 * fixed safe metadata (`updateId`, and `reason` for rejections): never an error, never update
 * content.
 */
export interface UpdateDispatchLogger {
  /** Results that arrive after the dispatcher gave up on an update. */
  debug?(metadata: Readonly<Record<string, unknown>>, message: string): void;
  /** Processor failures (rejections), timeouts, interruptions and rejections at a bound. */
  warn(metadata: Readonly<Record<string, unknown>>, message: string): void;
  /** Processors that threw synchronously. */
  error(metadata: Readonly<Record<string, unknown>>, message: string): void;
}

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
   * queue never hold one of these slots. Integer >= 1.
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
   * @defaultValue undefined (no timeout, as in the seed)
   */
  readonly timeoutMs?: number | undefined;
  /**
   * How many finished update ids are remembered to suppress duplicates (webhook retries, a poller
   * that fetches again from the watermark). Ids still queued, waiting or running are always
   * suppressed, whatever this is. Integer >= 0; 0 remembers none.
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
  /** Where failures, timeouts and rejections are logged. @defaultValue no logging */
  readonly logger?: UpdateDispatchLogger | undefined;
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

/** The defaults of {@link UpdateDispatcherOptions}; the first three are the seed's bounds. */
export const updateDispatcherDefaults = Object.freeze({
  maxQueuedPerPrincipal: 32,
  maxActivePrincipals: 256,
  maxConcurrency: 16,
  maxWaitingEnqueues: 1024,
  dedupeWindow: 4096,
  closeTimeoutMs: 10_000,
});

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
  readonly logger: UpdateDispatchLogger | undefined;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}

function checkObject(name: string, value: unknown): Readonly<Record<string, unknown>> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`Expected \`${name}\` to be an object, got ${describeType(value)}`);
  }
  return value as Readonly<Record<string, unknown>>;
}

function hasMethods(value: unknown, names: readonly string[]): boolean {
  if (typeof value !== "object" || value === null) return false;
  const target = value as Readonly<Record<string, unknown>>;
  return names.every((name) => typeof target[name] === "function");
}

function checkInteger(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  return checkNumber(name, value, { integer: true, min });
}

/** Validates `delayMs`-like options: an integer from 0 up to what a timer can hold. */
export function checkTimeout(name: string, value: unknown): number {
  return checkNumber(name, value, { integer: true, min: 0, max: MAX_TIMER_DELAY_MS });
}

/** Validates the processor. */
export function checkProcessor(processor: unknown): UpdateProcessor {
  if (typeof processor !== "function") {
    throw new TypeError(`Expected \`processor\` to be a function, got ${describeType(processor)}`);
  }
  return processor as UpdateProcessor;
}

/** Applies defaults and validates; throws a TypeError or RangeError naming the bad option. */
export function resolveOptions(options: unknown): ResolvedOptions {
  const given = options === undefined ? {} : checkObject("options", options);
  const defaults = updateDispatcherDefaults;
  const { clock = systemClock, logger, timeoutMs } = given;
  if (!hasMethods(clock, ["now", "setTimer"])) {
    throw new TypeError(
      `Expected \`clock\` to be a Clock with now() and setTimer(), got ${describeType(clock)}`,
    );
  }
  if (logger !== undefined && !hasMethods(logger, ["warn", "error"])) {
    throw new TypeError(
      `Expected \`logger\` to have warn() and error() methods, got ${describeType(logger)}`,
    );
  }
  return {
    maxQueuedPerPrincipal: checkInteger(
      "maxQueuedPerPrincipal",
      given.maxQueuedPerPrincipal,
      defaults.maxQueuedPerPrincipal,
      1,
    ),
    maxActivePrincipals: checkInteger(
      "maxActivePrincipals",
      given.maxActivePrincipals,
      defaults.maxActivePrincipals,
      1,
    ),
    maxConcurrency: checkInteger(
      "maxConcurrency",
      given.maxConcurrency,
      defaults.maxConcurrency,
      1,
    ),
    maxWaitingEnqueues: checkInteger(
      "maxWaitingEnqueues",
      given.maxWaitingEnqueues,
      defaults.maxWaitingEnqueues,
      1,
    ),
    timeoutMs:
      timeoutMs === undefined
        ? undefined
        : checkNumber("timeoutMs", timeoutMs, { greaterThan: 0, max: MAX_TIMER_DELAY_MS }),
    dedupeWindow: checkInteger("dedupeWindow", given.dedupeWindow, defaults.dedupeWindow, 0),
    closeTimeoutMs:
      given.closeTimeoutMs === undefined
        ? defaults.closeTimeoutMs
        : checkTimeout("closeTimeoutMs", given.closeTimeoutMs),
    clock: clock as Clock,
    logger: logger as UpdateDispatchLogger | undefined,
  };
}

/** Validates the options of `enqueue`. */
export function resolveEnqueueOptions(options: unknown): {
  wait: boolean;
  signal: AbortSignal | undefined;
} {
  if (options === undefined) return { wait: false, signal: undefined };
  const { wait = false, signal } = checkObject("options", options);
  if (typeof wait !== "boolean") {
    throw new TypeError(`Expected \`wait\` to be a boolean, got ${describeType(wait)}`);
  }
  return { wait, signal: checkSignal(signal) };
}

/** Validates an optional `signal` option. */
export function checkSignal(signal: unknown): AbortSignal | undefined {
  if (signal === undefined || signal instanceof AbortSignal) return signal;
  throw new TypeError(`Expected \`signal\` to be an AbortSignal, got ${describeType(signal)}`);
}

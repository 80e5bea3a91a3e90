// Time as an injected dependency: every telepace component reads time and sets timers through a
// Clock, so tests can drive it with a ManualClock instead of real time.

import { abortReason, onAbort } from "./abort.js";

/** A scheduled callback that can be cancelled. Cancelling twice, or after it fired, is a no-op. */
export interface Timer {
  /** Prevents the callback from running if it has not run yet. */
  cancel(): void;
}

/** Options of {@link Clock.sleep}. */
export interface SleepOptions {
  /** Aborting rejects the sleep with `signal.reason` and cancels its timer. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * A monotonic time source with timers. `now()` is in milliseconds from an arbitrary origin and
 * never goes backwards; it is not wall-clock time.
 */
export interface Clock {
  /** Monotonic time in milliseconds. */
  now(): number;
  /**
   * Runs `callback` once after `delayMs` milliseconds (negative delays count as 0).
   * @throws {RangeError} when `delayMs` is NaN or not a number.
   */
  setTimer(callback: () => void, delayMs: number): Timer;
  /**
   * Resolves after `delayMs` milliseconds; rejects with `signal.reason` when the signal aborts
   * first (or is already aborted), removing the timer.
   */
  sleep(delayMs: number, options?: SleepOptions): Promise<void>;
}

/** Validates a timer delay: NaN is a bug in the caller, a negative delay means "now". */
export function checkDelay(delayMs: number): number {
  if (typeof delayMs !== "number" || Number.isNaN(delayMs)) {
    throw new RangeError(`Expected \`delayMs\` to be a number, got ${String(delayMs)}`);
  }
  return Math.max(0, delayMs);
}

/**
 * Implements {@link Clock.sleep} on top of a clock's `setTimer`, so every clock aborts the same way.
 */
export function sleepWith(
  clock: Pick<Clock, "setTimer">,
  delayMs: number,
  options?: SleepOptions,
): Promise<void> {
  const signal = options?.signal;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const unsubscribe = onAbort(signal, () => {
      timer.cancel();
      reject(abortReason(signal as AbortSignal));
    });
    const timer = clock.setTimer(() => {
      unsubscribe();
      resolve();
    }, delayMs);
  });
}

/** The real clock: `performance.now()` and the global `setTimeout`. */
export const systemClock: Clock = Object.freeze({
  now: () => performance.now(),
  setTimer(callback: () => void, delayMs: number): Timer {
    const handle = setTimeout(callback, checkDelay(delayMs));
    return { cancel: () => clearTimeout(handle) };
  },
  sleep(delayMs: number, options?: SleepOptions): Promise<void> {
    return sleepWith(systemClock, delayMs, options);
  },
});

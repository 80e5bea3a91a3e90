// Calls waiting for the dispatcher to become idle (drain and close), each with an optional
// deadline and signal, all woken at once when it does.

import type { Clock, Timer } from "@telepace/core";
import type { AbortSubscriptions } from "./abort-subscriptions.js";

/** How a wait for idleness ended. */
export type IdleEnding = "idle" | "deadline" | "aborted";

/** The waits of `drain()` and `close()` for the moment nothing is queued, waiting or running. */
export class IdleWaiters {
  readonly #listeners = new Set<() => void>();
  readonly #clock: Clock;
  readonly #signals: AbortSubscriptions;

  constructor(clock: Clock, signals: AbortSubscriptions) {
    this.#clock = clock;
    this.#signals = signals;
  }

  /**
   * Resolves `idle` at the next {@link IdleWaiters.notify} (or at once when `isIdle`), `deadline`
   * after `timeoutMs`, or `aborted` when the signal aborts; its timer and listener are removed
   * whichever comes first. `onEnd` hears the ending synchronously, before anything else runs.
   */
  wait(
    isIdle: boolean,
    timeoutMs: number | undefined,
    signal: AbortSignal | undefined,
    onEnd?: (ending: IdleEnding) => void,
  ): Promise<IdleEnding> {
    let immediate: IdleEnding | undefined;
    if (isIdle) immediate = "idle";
    else if (signal?.aborted) immediate = "aborted";
    else if (timeoutMs === 0) immediate = "deadline";
    if (immediate !== undefined) {
      onEnd?.(immediate);
      return Promise.resolve(immediate);
    }
    return new Promise<IdleEnding>((resolve) => {
      let timer: Timer | undefined;
      const end = (ending: IdleEnding): void => {
        this.#listeners.delete(onIdle);
        timer?.cancel();
        unsubscribe();
        onEnd?.(ending);
        resolve(ending);
      };
      const onIdle = (): void => end("idle");
      this.#listeners.add(onIdle);
      const unsubscribe = this.#signals.subscribe(signal, () => end("aborted"));
      if (timeoutMs !== undefined) timer = this.#clock.setTimer(() => end("deadline"), timeoutMs);
    });
  }

  /** Whether anybody waits (so the caller can skip its idleness check). */
  get isEmpty(): boolean {
    return this.#listeners.size === 0;
  }

  /** The dispatcher became idle: wakes every wait. */
  notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}

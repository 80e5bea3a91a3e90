// A deadline on the injected clock as an AbortSignal, for close(): every step of a shutdown
// shares one deadline, and the caller's signal ends it early.

import { type Clock, onAbort } from "@telepace/core";

function noop(): void {}

/** A signal that aborts `timeoutMs` from now, or when `signal` aborts. Dispose it when done. */
export class Deadline {
  readonly #controller = new AbortController();
  readonly #clock: Clock;
  readonly #endsAt: number;
  readonly #dispose: () => void;

  constructor(clock: Clock, timeoutMs: number, signal: AbortSignal | undefined) {
    this.#clock = clock;
    this.#endsAt = clock.now() + timeoutMs;
    const abort = (): void => this.#controller.abort();
    const timer = clock.setTimer(abort, timeoutMs);
    const unsubscribe = onAbort(signal, abort);
    if (signal?.aborted) abort();
    this.#dispose = () => {
      timer.cancel();
      unsubscribe();
    };
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Milliseconds left, rounded up; 0 once it has passed or was ended. */
  get remainingMs(): number {
    if (this.signal.aborted) return 0;
    return Math.max(0, Math.ceil(this.#endsAt - this.#clock.now()));
  }

  /** Resolves when `promise` settles or the deadline passes, whichever comes first. */
  race(promise: Promise<unknown>): Promise<void> {
    const { signal } = this;
    if (signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const unsubscribe = onAbort(signal, resolve);
      promise.then(noop, noop).finally(() => {
        unsubscribe();
        resolve();
      });
    });
  }

  /** Cancels the timer and the listener on the caller's signal. */
  dispose(): void {
    this.#dispose();
  }
}

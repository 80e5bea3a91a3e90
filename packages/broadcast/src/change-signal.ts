// What a broadcast's feeding loop waits on: the next change (a send settled, a batch done, a
// pause or a resume), or a time, whichever comes first.

import { type Clock, createDeferred, type Deferred } from "@telepace/core";

/** One waiter at a time, woken by `notify()` or after a given delay. */
export class ChangeSignal {
  readonly #clock: Clock;
  #changed: Deferred<void> | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Resolves at the next `notify()`, or after `ms` (on the clock) when given. */
  next(ms?: number): Promise<void> {
    this.#changed ??= createDeferred<void>();
    const { promise } = this.#changed;
    if (ms !== undefined) {
      const timer = this.#clock.setTimer(() => this.notify(), ms);
      void promise.then(() => timer.cancel());
    }
    return promise;
  }

  /** Wakes whoever waits. */
  notify(): void {
    const changed = this.#changed;
    this.#changed = undefined;
    changed?.resolve();
  }
}

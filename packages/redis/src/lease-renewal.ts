// LeaseRenewal: keeps a lease alive from one process, renewing it every interval on the injected
// clock, one renewal at a time (the next is armed only once the last one settled), until stopped
// or a renewal says the lease is gone. The poller's lease and the worker's heartbeats use it.

import type { Clock, Timer } from "@telepace/core";

/**
 * Calls `renew` every `intervalMs` until {@link LeaseRenewal.stop} or until `renew` resolves
 * `false`. `renew` handles its own failures: a rejection stops the renewal like `false` does.
 */
export class LeaseRenewal {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #renew: () => Promise<boolean>;
  #timer: Timer | undefined;
  #isRunning = false;

  constructor(clock: Clock, intervalMs: number, renew: () => Promise<boolean>) {
    this.#clock = clock;
    this.#intervalMs = intervalMs;
    this.#renew = renew;
  }

  /** Whether renewals go on. */
  get isRunning(): boolean {
    return this.#isRunning;
  }

  /** Starts renewing, the first renewal one interval from now. Idempotent while running. */
  start(): void {
    if (this.#isRunning) return;
    this.#isRunning = true;
    this.#arm();
  }

  /** Stops: no renewal is armed any more (one already under way still settles). Idempotent. */
  stop(): void {
    this.#isRunning = false;
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #arm(): void {
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      this.#renew().then(
        (held) => {
          if (!held) this.#isRunning = false;
          else if (this.#isRunning) this.#arm();
        },
        () => {
          this.#isRunning = false;
        },
      );
    }, this.#intervalMs);
  }
}

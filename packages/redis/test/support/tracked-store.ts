// A store whose answers come over real I/O, driven on a ManualClock: time moves on only once every
// question asked so far has its answer, so a run on Redis is as deterministic as one in memory.

import type { ManualClock } from "@telepace/core";
import type { FreezeListener, PacingDecision, PacingRequest, PacingStore } from "@telepace/outbox";

export class TrackedStore implements PacingStore {
  readonly #inner: PacingStore;
  readonly #pending = new Set<Promise<unknown>>();

  constructor(inner: PacingStore) {
    this.#inner = inner;
  }

  /** The inner store's: the outbox reserves slots ahead through this one as through it. */
  get reserveAheadMs(): number | undefined {
    return this.#inner.reserveAheadMs;
  }

  onFreeze(listener: FreezeListener): () => void {
    return this.#inner.onFreeze?.(listener) ?? (() => {});
  }

  /** Whether no answer is outstanding. */
  get isIdle(): boolean {
    return this.#pending.size === 0;
  }

  acquire(request: PacingRequest): Promise<PacingDecision> {
    return this.#track(Promise.resolve(this.#inner.acquire(request)));
  }

  freeze(chatKey: string | undefined, durationMs: number, nowMs: number): Promise<void> {
    return this.#track(Promise.resolve(this.#inner.freeze(chatKey, durationMs, nowMs)));
  }

  /** Waits until no answer is outstanding, continuations included. */
  async settle(clock: ManualClock): Promise<void> {
    for (;;) {
      await clock.flush();
      if (this.#pending.size === 0) return;
      await Promise.allSettled([...this.#pending]);
    }
  }

  /** Like `clock.runAll()`, with every answer landed before each move of time. */
  async run(clock: ManualClock): Promise<void> {
    for (let fired = 0; fired < 100_000; fired++) {
      await this.settle(clock);
      const next = clock.nextTimerAt();
      if (next === undefined) return;
      await clock.advanceTo(next);
    }
    throw new Error("TrackedStore.run: timers never ran out");
  }

  #track<T>(promise: Promise<T>): Promise<T> {
    this.#pending.add(promise);
    const untrack = () => this.#pending.delete(promise);
    promise.then(untrack, untrack);
    return promise;
  }
}

// A deterministic clock for tests: time moves only when the test says so, and timers fire in
// time order with promise continuations run between them.

import { BinaryHeap } from "./binary-heap.js";
import { type Clock, checkDelay, type SleepOptions, sleepWith, type Timer } from "./clock.js";

interface ScheduledTimer {
  readonly at: number;
  readonly seq: number;
  readonly callback: () => void;
  cancelled: boolean;
}

// Captured at load so a test that fakes the global timers cannot break the flush.
const realSetImmediate = globalThis.setImmediate;

/** Lets every pending promise continuation run (one macrotask turn drains the microtask queue). */
function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

/**
 * A {@link Clock} whose time moves only through {@link ManualClock.advance}. Timers fire in time
 * order, ties in the order they were set, and pending promise continuations run before and after
 * each timer, so code that awaits `sleep` moves forward deterministically.
 *
 * @example
 * const clock = new ManualClock();
 * const done = clock.sleep(1000).then(() => clock.now());
 * await clock.advance(1000);
 * await done; // 1000
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new BinaryHeap<ScheduledTimer>((a, b) => a.at - b.at || a.seq - b.seq);

  /** @param startMs - the initial value of `now()`. @defaultValue 0 */
  constructor(startMs = 0) {
    if (!Number.isFinite(startMs)) {
      throw new RangeError(`Expected \`startMs\` to be a finite number, got ${String(startMs)}`);
    }
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimer(callback: () => void, delayMs: number): Timer {
    const timer: ScheduledTimer = {
      at: this.#now + checkDelay(delayMs),
      seq: this.#seq++,
      callback,
      cancelled: false,
    };
    this.#timers.push(timer);
    return {
      cancel: () => {
        if (timer.cancelled) return;
        timer.cancelled = true;
        this.#timers.remove(timer);
      },
    };
  }

  sleep(delayMs: number, options?: SleepOptions): Promise<void> {
    return sleepWith(this, delayMs, options);
  }

  /** Number of timers set and not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** When the earliest pending timer is due, or `undefined` when none is pending. */
  nextTimerAt(): number | undefined {
    return this.#timers.peek()?.at;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way (including timers
   * set by those callbacks) at its own time, with continuations flushed between them.
   */
  async advance(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0) {
      throw new RangeError(`Expected \`ms\` to be a finite number >= 0, got ${String(ms)}`);
    }
    await this.#runUntil(this.#now + ms);
  }

  /** Moves time forward to the absolute time `targetMs` (no-op when it is in the past). */
  async advanceTo(targetMs: number): Promise<void> {
    if (!Number.isFinite(targetMs)) {
      throw new RangeError(`Expected \`targetMs\` to be a finite number, got ${String(targetMs)}`);
    }
    await this.#runUntil(Math.max(this.#now, targetMs));
  }

  /**
   * Fires timers in order until none is pending, flushing continuations between them.
   * @param maxTimers - a guard against code that re-arms a timer forever. @defaultValue 100000
   * @throws {Error} when more than `maxTimers` timers fire.
   */
  async runAll(maxTimers = 100_000): Promise<void> {
    await flushMicrotasks();
    for (let fired = 0; ; fired++) {
      const next = this.#timers.peek();
      if (next === undefined) return;
      if (fired >= maxTimers)
        throw new Error(`ManualClock.runAll fired ${maxTimers} timers and timers remain`);
      await this.#fire(next);
    }
  }

  /** Lets pending promise continuations run without moving time. */
  flush(): Promise<void> {
    return flushMicrotasks();
  }

  async #runUntil(target: number): Promise<void> {
    await flushMicrotasks();
    for (;;) {
      const next = this.#timers.peek();
      if (next === undefined || next.at > target) break;
      await this.#fire(next);
    }
    this.#now = target;
    await flushMicrotasks();
  }

  async #fire(timer: ScheduledTimer): Promise<void> {
    this.#timers.pop();
    this.#now = Math.max(this.#now, timer.at);
    timer.cancelled = true;
    timer.callback();
    await flushMicrotasks();
  }
}

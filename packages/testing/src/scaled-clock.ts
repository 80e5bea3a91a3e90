// Telegram time for a time-scaled run: a Clock whose milliseconds are Telegram milliseconds, so
// telepace keeps its defaults while the sim runs Telegram's limits `scale` times faster.

import { type Clock, checkDelay, type SleepOptions, sleepWith, type Timer } from "@telepace/core";

/**
 * A clock whose `now()` advances `scale` Telegram ms per real ms, with timers to match. The peers
 * read the real clock, so they get their millisecond options divided by `scale` instead: the same
 * compression of time on both sides.
 */
export class ScaledClock implements Clock {
  readonly scale: number;
  readonly #origin = performance.now();

  constructor(scale: number) {
    if (!(scale > 0) || !Number.isFinite(scale)) {
      throw new RangeError(`Expected \`scale\` to be a finite number > 0, got ${String(scale)}`);
    }
    this.scale = scale;
  }

  now(): number {
    return (performance.now() - this.#origin) * this.scale;
  }

  setTimer(callback: () => void, delayMs: number): Timer {
    const handle = setTimeout(callback, checkDelay(delayMs) / this.scale);
    return { cancel: () => clearTimeout(handle) };
  }

  sleep(delayMs: number, options?: SleepOptions): Promise<void> {
    return sleepWith(this, delayMs, options);
  }
}

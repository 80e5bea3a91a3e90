// Telegram time for a time-scaled run: the sim runs Telegram's limits `scale` times faster, so a
// client must too. telepace takes a Clock, so it gets one whose milliseconds are Telegram
// milliseconds and keeps every default; the peers, which read the real clock, get their
// millisecond options divided by `scale` instead. Both are the same compression of time.

import { type Clock, checkDelay, type SleepOptions, sleepWith, type Timer } from "@telepace/core";

/** A clock whose `now()` advances `scale` Telegram ms per real ms, with timers to match. */
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

// A clock whose milliseconds are Telegram milliseconds of a time-scaled run.

import { afterEach, describe, expect, it, vi } from "vitest";
import { ScaledClock } from "../src/index.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("ScaledClock", () => {
  it("runs Telegram time `scale` times faster than real time, timers included", () => {
    vi.useFakeTimers();
    const clock = new ScaledClock(10);
    const started = clock.now();
    const fired = vi.fn();
    clock.setTimer(fired, 1_000);
    vi.advanceTimersByTime(99);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledOnce();
    expect(clock.now() - started).toBeCloseTo(1_000, 6);
    expect(() => new ScaledClock(0)).toThrow(RangeError);
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RecentDurations } from "../src/recent-durations.js";

describe("RecentDurations", () => {
  it("is the longest duration that ended within the horizon, 0 when none did", () => {
    const durations = new RecentDurations(1_000);
    expect(durations.max(0)).toBe(0);
    durations.record(100, 300);
    durations.record(200, 40);
    expect(durations.max(1_000)).toBe(300);
    // The 300 ms one ended at 100: past the horizon at 1,101, the 40 ms one is the longest.
    expect(durations.max(1_101)).toBe(40);
    expect(durations.max(1_201)).toBe(0);
  });

  it("matches a scan of every recorded duration", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ gap: fc.nat(400), duration: fc.nat(2_000) }), { maxLength: 300 }),
        (steps) => {
          const durations = new RecentDurations(1_000);
          const recorded: { endedAt: number; duration: number }[] = [];
          let now = 0;
          for (const { gap, duration } of steps) {
            now += gap;
            durations.record(now, duration);
            recorded.push({ endedAt: now, duration });
            const expected = Math.max(
              0,
              ...recorded.filter((r) => r.endedAt >= now - 1_000).map((r) => r.duration),
            );
            expect(durations.max(now)).toBe(expected);
          }
        },
      ),
    );
  });
});

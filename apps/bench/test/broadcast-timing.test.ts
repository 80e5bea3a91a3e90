import { describe, expect, it } from "vitest";
import { idealMs } from "../src/broadcast/config.js";
import { analyseTiming, type RequestTiming } from "../src/broadcast/timing.js";

const free = { perSecond: 30, burst: 30 };

describe("idealMs", () => {
  it("sends the burst at once and the rest at the pace", () => {
    expect(idealMs(10_000, free)).toBeCloseTo((9_970 / 30) * 1000, 6);
    expect(idealMs(2_000, { perSecond: 1000, burst: 1000 })).toBe(1000);
    expect(idealMs(20, free)).toBe(0);
  });
});

describe("analyseTiming", () => {
  // 31 requests at ×5: 30 started at real 0 ms, the 31st a Telegram second and 100 ms later.
  const requests: RequestTiming[] = Array.from({ length: 31 }, (_, index) => {
    const startedAt = index < 30 ? 0 : 220;
    return { chatId: index + 1, startedAt, endedAt: startedAt + 4 };
  });

  it("clears the sender when its starts kept the second and one request arrived late", () => {
    // Request 1 is stored 30 ms real (150 Telegram ms) after its start; the refused one at once.
    const storedAt: Record<string, number> = {};
    for (let id = 1; id <= 30; id++) storedAt[id] = id === 1 ? 30 : 1;
    const timing = analyseTiming(
      requests,
      { rateLimited: [{ chatId: 31, at: 221, scope: "global" }], storedAt },
      5,
      100,
      30,
    );
    expect(timing.requests).toBe(31);
    expect(timing.durationP50Ms).toBe(20);
    expect(timing.delayMaxMs).toBe(150);
    expect(timing.delaysOverMarginCap).toBe(1);
    expect(timing.rateLimited).toEqual([
      { scope: "global", startsInSecond: 1, ownDelayMs: 5, longestDelayAheadMs: 150 },
    ]);
  });

  it("counts the starts in the second before a refused one, so a sender's burst shows", () => {
    const burst = requests.map((request) => ({ ...request, startedAt: 0, endedAt: 4 }));
    const timing = analyseTiming(
      burst,
      { rateLimited: [{ chatId: 31, at: 1, scope: "global" }], storedAt: { 1: 1 } },
      5,
      100,
      30,
    );
    expect(timing.rateLimited[0]?.startsInSecond).toBe(31);
  });
});

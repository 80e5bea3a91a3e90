import { describe, expect, it } from "vitest";
import { FREE, PAID } from "../src/broadcast/config.js";
import { RunDeadline } from "../src/broadcast/deadline.js";

describe("RunDeadline", () => {
  // Free to 300 with 12.5 s: the limits' fastest is 30 at once, then 30 a second.
  const free = new RunDeadline(12_500, 300, FREE);

  it("stops a run once even the limits' fastest could not send the rest by the deadline", () => {
    // 150 left at 8.5 s: 30 at once, 120 more in 4 s, done at 12.5 s — still reachable.
    expect(free.isOver(8_500, 150)).toBe(false);
    expect(free.isOver(8_501, 150)).toBe(true);
    // A loop at half the pace (15 a second) is out of reach after 7 s, not only at 12.5 s.
    expect(free.isOver(6_900, 103)).toBe(false);
    expect(free.isOver(7_100, 106)).toBe(true);
  });

  it("lets a run at the pace finish, and stops anything at the deadline itself", () => {
    // At the ideal's own pace the rest always fits: the last 30 go at once.
    for (let second = 0; second <= 9; second++) {
      expect(free.isOver(second * 1_000, 30 + second * 30)).toBe(false);
    }
    expect(free.isOver(12_500, 299)).toBe(false);
    expect(free.isOver(12_501, 299)).toBe(true);
    expect(free.isOver(20_000, 300)).toBe(false);
  });

  it("counts the paid burst and pace", () => {
    const paid = new RunDeadline(2_500, 2_000, PAID);
    // 1 900 left at 1.5 s: 1 000 at once and 900 more by 2.4 s.
    expect(paid.isOver(1_500, 100)).toBe(false);
    // A loop at 77 a second (the grammY loop's paid pace) is out of reach after about 1.6 s.
    expect(paid.isOver(1_600, 123)).toBe(false);
    expect(paid.isOver(1_700, 131)).toBe(true);
  });

  it("never stops a run without a deadline", () => {
    const none = new RunDeadline(Number.POSITIVE_INFINITY, 300, FREE);
    expect(none.isOver(1e9, 0)).toBe(false);
  });

  it("rejects a negative deadline and a fractional recipient count", () => {
    expect(() => new RunDeadline(-1, 300, FREE)).toThrow(
      "Expected `deadlineMs` to be a number >= 0, got -1",
    );
    expect(() => new RunDeadline(1_000, 2.5, FREE)).toThrow(
      "Expected `recipients` to be an integer >= 0, got 2.5",
    );
  });
});

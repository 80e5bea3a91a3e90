import { describe, expect, it } from "vitest";
import { LaneQueue } from "../src/lane-queue.js";

const place = (priority: number, queuedAt: number, seq: number) => ({ priority, queuedAt, seq });

describe("LaneQueue", () => {
  it("pops ready lanes by their head's place, skipping tickets that were replaced", () => {
    const queue = new LaneQueue<string>();
    const headA = place(2, 0, 0);
    queue.markReady("a", headA);
    queue.markReady("b", place(0, 5, 1));
    queue.markReady("c", place(0, 5, 2));
    // The same head again adds nothing; a new head replaces the lane's ticket.
    expect(queue.markReady("a", headA)).toBe(false);
    expect(queue.markReady("a", place(0, 1, 3))).toBe(true);
    expect([queue.popReady(), queue.popReady(), queue.popReady(), queue.popReady()]).toEqual([
      "a",
      "b",
      "c",
      undefined,
    ]);
  });

  it("moves a lane between ready and waiting, and forgets a removed one", () => {
    const queue = new LaneQueue<string>();
    queue.markReady("a", place(0, 0, 0));
    queue.markWaiting("a", 100, 0);
    expect(queue.popReady()).toBeUndefined();
    expect(queue.markWaiting("a", 100, 0)).toBe(false);
    queue.markWaiting("b", 50, 1);
    queue.remove("b");
    expect(queue.popDue(99)).toBeUndefined();
    expect(queue.popDue(100)).toBe("a");
    expect(queue.popDue(100)).toBeUndefined();
  });

  it("wakes up at the first waiting lane, or at the global budget while a lane is ready", () => {
    const queue = new LaneQueue<string>();
    expect(queue.nextWakeUp(0, 0)).toBe(Number.POSITIVE_INFINITY);
    queue.markWaiting("a", 300, 0);
    queue.markWaiting("b", 200, 1);
    queue.markWaiting("b", 400, 1);
    expect(queue.nextWakeUp(0, 0)).toBe(300);
    queue.markReady("c", place(0, 0, 2));
    expect(queue.nextWakeUp(0, 0)).toBe(300);
    expect(queue.nextWakeUp(0, 150)).toBe(150);
    queue.clear();
    expect(queue.nextWakeUp(0, 150)).toBe(Number.POSITIVE_INFINITY);
  });
});

import { describe, expect, it } from "vitest";
import { LaneQueue } from "../src/lane-queue.js";

const place = (priority: number, queuedAt: number, seq: number) => ({ priority, queuedAt, seq });
const open = { global: 0, "paid-broadcast": 0 };
const at = (global: number, paid = 0) => ({ global, "paid-broadcast": paid });

describe("LaneQueue", () => {
  it("pops ready lanes by their head's place, skipping tickets that were replaced", () => {
    const queue = new LaneQueue<string>();
    const headA = place(2, 0, 0);
    queue.markReady("a", headA, "global");
    queue.markReady("b", place(0, 5, 1), "global");
    queue.markReady("c", place(0, 5, 2), "global");
    // The same head again adds nothing; a new head replaces the lane's ticket.
    expect(queue.markReady("a", headA, "global")).toBe(false);
    expect(queue.markReady("a", place(0, 1, 3), "global")).toBe(true);
    const pop = () => queue.popReady(0, open);
    expect([pop(), pop(), pop(), pop()]).toEqual(["a", "b", "c", undefined]);
  });

  it("moves a lane between ready and waiting, and forgets a removed one", () => {
    const queue = new LaneQueue<string>();
    queue.markReady("a", place(0, 0, 0), "global");
    queue.markWaiting("a", 100, 0);
    expect(queue.popReady(0, open)).toBeUndefined();
    expect(queue.markWaiting("a", 100, 0)).toBe(false);
    queue.markWaiting("b", 50, 1);
    queue.remove("b");
    expect(queue.popDue(99)).toBeUndefined();
    expect(queue.popDue(100)).toBe("a");
    expect(queue.popDue(100)).toBeUndefined();
  });

  it("wakes up at the first waiting lane, or when a budget holding a ready lane has room", () => {
    const queue = new LaneQueue<string>();
    expect(queue.nextWakeUp(0, open)).toBe(Number.POSITIVE_INFINITY);
    queue.markWaiting("a", 300, 0);
    queue.markWaiting("b", 200, 1);
    queue.markWaiting("b", 400, 1);
    expect(queue.nextWakeUp(0, open)).toBe(300);
    queue.markReady("c", place(0, 0, 2), "global");
    expect(queue.nextWakeUp(0, open)).toBe(300);
    expect(queue.nextWakeUp(0, at(150))).toBe(150);
    // The paid budget holds no ready lane: its time does not matter.
    expect(queue.nextWakeUp(0, at(0, 100))).toBe(300);
    queue.clear();
    expect(queue.nextWakeUp(0, at(150))).toBe(Number.POSITIVE_INFINITY);
  });

  it("pops from the budgets with room only, the best head among them first", () => {
    const queue = new LaneQueue<string>();
    queue.markReady("reply", place(0, 10, 0), "global");
    queue.markReady("paid1", place(3, 0, 1), "paid-broadcast");
    queue.markReady("paid2", place(3, 1, 2), "paid-broadcast");
    // Both have room: the reply's priority wins.
    expect(queue.popReady(0, open)).toBe("reply");
    queue.markReady("reply", place(0, 10, 0), "global");
    // The global budget is full until 500: paid lanes still pop, the reply waits.
    expect(queue.popReady(0, at(500))).toBe("paid1");
    expect(queue.nextWakeUp(0, at(500))).toBe(500);
    // A lane moved to the other budget (its new head is a paid send) is found only there.
    queue.markReady("reply", place(3, 20, 3), "paid-broadcast");
    expect(queue.popReady(0, at(0, 1_000))).toBeUndefined();
    expect(queue.popReady(0, at(500))).toBe("paid2");
    expect(queue.popReady(0, at(500))).toBe("reply");
  });
});

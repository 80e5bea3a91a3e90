import { describe, expect, it } from "vitest";
import { OutboxWaits } from "../src/outbox-waits.js";

describe("OutboxWaits", () => {
  it("knows keyed ops by chat and key, and keeps a coalesced op's enqueue time", () => {
    const waits = new OutboxWaits(10);
    waits.enqueued("1", "edit:5", 2, 100);
    waits.enqueued("2", "edit:5", 2, 200);
    waits.coalesced("1", "edit:5", 0);
    expect(waits.started("2", "edit:5")).toBe(200);
    expect(waits.started("1", "edit:5")).toBe(100);
    expect(waits.started("1", "edit:5")).toBeUndefined();
    expect(waits.size).toBe(0);
  });

  it("starts a chat's unkeyed ops in (priority, enqueue time) order", () => {
    const waits = new OutboxWaits(10);
    waits.enqueued("1", undefined, 2, 10);
    waits.enqueued("1", undefined, 0, 20);
    waits.enqueued("1", undefined, 0, 30);
    waits.enqueued(undefined, undefined, 0, 40);
    expect(waits.started("1", undefined)).toBe(20);
    expect(waits.started("1", undefined)).toBe(30);
    expect(waits.started(undefined, undefined)).toBe(40);
    expect(waits.started("1", undefined)).toBe(10);
    expect(waits.started("1", undefined)).toBeUndefined();
  });

  it("forgets ops that leave unstarted: keyed exactly, unkeyed as the chat's youngest", () => {
    const waits = new OutboxWaits(10);
    waits.enqueued("1", undefined, 0, 10);
    waits.enqueued("1", undefined, 0, 20);
    waits.enqueued("1", "k", 0, 30);
    waits.left("1", "k");
    waits.left("1", undefined);
    waits.left("9", undefined);
    expect(waits.size).toBe(1);
    expect(waits.started("1", undefined)).toBe(10);
    expect(waits.started("1", "k")).toBeUndefined();
  });

  it("tracks at most maxTracked ops", () => {
    const waits = new OutboxWaits(2);
    waits.enqueued("1", "a", 0, 1);
    waits.enqueued("1", "b", 0, 2);
    waits.enqueued("1", "c", 0, 3);
    expect(waits.size).toBe(2);
    expect(waits.started("1", "c")).toBeUndefined();
    expect(waits.started("1", "a")).toBe(1);
    waits.enqueued("1", "d", 0, 4);
    expect(waits.started("1", "d")).toBe(4);
  });
});

// Cancellation: an aborted acquire leaves no queue entry, no listener and no charge behind.

import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { MediaSchedulerRegistry } from "../src/index.js";
import { grantTurn, permitOf, tick, track, UNIT } from "./helpers.js";

function setup() {
  const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
  const open = () => registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
  return { registry, open };
}

describe("cancellation", () => {
  it("rejects at once with the reason when the signal is already aborted", async () => {
    const { open } = setup();
    const transfer = open();
    const reason = new Error("gave up");
    await expect(transfer.acquire(UNIT, { signal: AbortSignal.abort(reason) })).rejects.toBe(
      reason,
    );
    expect(transfer.schedulerSnapshot()).toMatchObject({ queuedRequests: 0, activeBytes: 0 });
  });

  it("rejects with an AbortError when the signal carries no reason", async () => {
    const { open } = setup();
    const transfer = open();
    const held = await transfer.acquire(UNIT);
    const controller = new AbortController();
    const waiting = track(transfer.acquire(UNIT, { signal: controller.signal }));
    controller.abort();
    await tick();
    expect(waiting.reason).toMatchObject({ name: "AbortError" });
    held.release();
  });

  it("lets the next request through when the aborted one was holding up the line", async () => {
    const registry = new MediaSchedulerRegistry({ upload: { maxBytesInFlight: 2 * UNIT } });
    const open = () => registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
    const holder = open();
    const a = open();
    const b = open();
    const held = await holder.acquire(UNIT);
    const controller = new AbortController();
    // `a`'s 2-unit request is next in line and waits for capacity; `b`'s 1-unit one waits behind.
    const big = track(a.acquire(2 * UNIT, { signal: controller.signal }));
    const small = track(b.acquire(UNIT));
    await tick();
    expect(small.status).toBe("pending");
    controller.abort();
    await tick();
    expect(big.status).toBe("rejected");
    expect(small.status).toBe("fulfilled");
    held.release();
    permitOf(small).release();
  });

  it("keeps the transfer's other requests in their order", async () => {
    const { open } = setup();
    const transfer = open();
    let held = await transfer.acquire(UNIT);
    const controller = new AbortController();
    const first = track(transfer.acquire(UNIT));
    const second = track(transfer.acquire(UNIT, { signal: controller.signal }));
    const third = track(transfer.acquire(2));
    controller.abort();
    held.release();
    await tick();
    expect([first.status, second.status, third.status]).toEqual([
      "fulfilled",
      "rejected",
      "pending",
    ]);
    held = permitOf(first);
    held.release();
    await tick();
    expect(permitOf(third).bytes).toBe(2);
    permitOf(third).release();
  });

  it("removes a transfer waiting for a size-class slot from that wait", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxActiveSmallTransfers: 1 } });
    const a = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const b = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const held = await a.acquire(UNIT);
    const controller = new AbortController();
    const waiting = track(b.acquire(UNIT, { signal: controller.signal }));
    expect(a.schedulerSnapshot().transfersWaitingForSlot).toBe(1);
    controller.abort();
    await tick();
    expect(waiting.status).toBe("rejected");
    expect(a.schedulerSnapshot()).toMatchObject({ transfersWaitingForSlot: 0, queuedRequests: 0 });
    held.release();
    expect(a.schedulerSnapshot().smallSlotsInUse).toBe(0);
  });

  it("removes its abort listener when the acquire is granted, rejected or aborted", async () => {
    const { open } = setup();
    const transfer = open();
    const granted = new AbortController();
    const held = await transfer.acquire(UNIT, { signal: granted.signal });
    expect(getEventListeners(granted.signal, "abort")).toHaveLength(0);
    const closed = new AbortController();
    const waiting = track(transfer.acquire(UNIT, { signal: closed.signal }));
    expect(getEventListeners(closed.signal, "abort")).toHaveLength(1);
    transfer.close();
    await tick();
    expect(waiting.status).toBe("rejected");
    expect(getEventListeners(closed.signal, "abort")).toHaveLength(0);
    held.release();
  });

  it("leaves a permit alone when the signal aborts after the caller took it", async () => {
    const { open } = setup();
    const transfer = open();
    const controller = new AbortController();
    const permit = await transfer.acquire(UNIT, { signal: controller.signal });
    controller.abort();
    expect(permit.isReleased).toBe(false);
    expect(transfer.schedulerSnapshot().activeBytes).toBe(UNIT);
    permit.release();
  });

  it("counts aborted acquires, before and right after the grant", async () => {
    const { registry, open } = setup();
    const transfer = open();
    const held = await transfer.acquire(UNIT);
    const queued = new AbortController();
    const justGranted = new AbortController();
    const a = track(transfer.acquire(UNIT, { signal: queued.signal }));
    queued.abort();
    const b = track(transfer.acquire(UNIT, { signal: justGranted.signal }));
    held.release();
    await grantTurn();
    justGranted.abort();
    await tick();
    expect([a.status, b.status]).toEqual(["rejected", "rejected"]);
    expect(registry.snapshot().counters).toMatchObject({ aborted: 2, grants: 2, releases: 2 });
  });

  it("refuses a signal that is not an AbortSignal", () => {
    const { open } = setup();
    expect(() => open().acquire(UNIT, { signal: {} as AbortSignal })).toThrow(
      new TypeError("Expected `signal` to be an AbortSignal, got an object"),
    );
  });
});

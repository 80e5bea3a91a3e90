// Migration: pending requests follow the transfer to its new data centre, in order; granted
// permits drain where they were granted; the old scheduler goes once drained.

import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { type MediaPermit, MediaSchedulerRegistry } from "../src/index.js";
import { grantTurn, permitOf, recordEvents, tick, track, UNIT } from "./helpers.js";

describe("rebind", () => {
  it("moves waiting requests in their order and grants them at the new data centre", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    const held = await transfer.acquire(UNIT);
    const sizes = [1, 2, 3];
    const order: number[] = [];
    const acquires = sizes.map((bytes) =>
      track(
        transfer.acquire(bytes).then((permit) => {
          order.push(permit.bytes);
          return permit;
        }),
      ),
    );
    transfer.rebind(4);
    for (let i = 0; i < sizes.length; i++) {
      await tick();
      const granted = acquires.find((a) => a.status === "fulfilled" && !permitOf(a).isReleased);
      expect(permitOf(granted).dc).toBe(4);
      permitOf(granted).release();
    }
    expect(order).toEqual(sizes);
    held.release();
  });

  it("leaves granted permits charged at the old scheduler, which goes once they are released", async () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    const held = await transfer.acquire(2 * UNIT);
    const recorder = recordEvents();
    transfer.rebind(4);
    expect(registry.schedulerSnapshot(2, "download")?.transfers).toEqual([
      expect.objectContaining({ transferId: transfer.id, isCurrent: false, livePermits: 1 }),
    ]);
    expect(transfer.snapshot()).toMatchObject({ dc: 4, drainingDcs: [2], activeBytes: 2 * UNIT });
    expect(registry.schedulerSnapshot(2, "download")).toMatchObject({
      dc: 2,
      activeBytes: 2 * UNIT,
    });
    held.release();
    recorder.stop();
    expect(registry.schedulerSnapshot(2, "download")).toBeUndefined();
    expect(recorder.events.map((e) => e.type)).toEqual(["rebind", "release", "evict"]);
    expect(recorder.events[0]).toEqual({
      type: "rebind",
      direction: "download",
      transferId: transfer.id,
      fromDc: 2,
      toDc: 4,
      movedRequests: 0,
      drainingPermits: 1,
    });
  });

  it("reuses the draining binding when the transfer migrates back", async () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    const held = await transfer.acquire(UNIT);
    transfer.rebind(4);
    transfer.rebind(2);
    const entries = transfer.schedulerSnapshot().transfers;
    expect(entries).toEqual([
      expect.objectContaining({ transferId: transfer.id, isCurrent: true, livePermits: 1 }),
    ]);
    expect(registry.schedulerSnapshot(4, "download")).toBeUndefined();
    held.release();
    expect(registry.size).toBe(1);
    transfer.close();
    expect(registry.size).toBe(0);
  });

  it("makes moved requests take their turn with the transfers already at the new data centre", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const local = registry.open({ dc: 4, direction: "download", sizeBytes: 1 });
    const migrating = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    const blocker2 = await registry
      .open({ dc: 2, direction: "download", sizeBytes: 1 })
      .acquire(UNIT);
    let held: MediaPermit = await local.acquire(UNIT);
    const localAcquires = [1, 2].map(() => track(local.acquire(UNIT)));
    const movedAcquires = [1, 2].map(() => track(migrating.acquire(UNIT)));
    migrating.rebind(4);
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      held.release();
      await tick();
      const granted = [...localAcquires, ...movedAcquires].find(
        (a) => a.status === "fulfilled" && !permitOf(a).isReleased,
      );
      held = permitOf(granted);
      order.push(held.transferId);
    }
    held.release();
    blocker2.release();
    expect(order).toEqual([migrating.id, local.id, migrating.id, local.id]);
  });

  it("needs a size-class slot at the new data centre like any other transfer", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxActiveLargeTransfers: 1 } });
    const resident = registry.open({ dc: 4, direction: "download" });
    const held = await resident.acquire(UNIT);
    const migrating = registry.open({ dc: 2, direction: "download" });
    const blocker = await registry.open({ dc: 2, direction: "download" }).acquire(UNIT);
    const waiting = track(migrating.acquire(UNIT));
    migrating.rebind(4);
    await tick();
    expect(waiting.status).toBe("pending");
    expect(migrating.schedulerSnapshot().transfers).toContainEqual(
      expect.objectContaining({ transferId: migrating.id, state: "waiting-for-slot" }),
    );
    held.release();
    await tick();
    expect(waiting.status).toBe("fulfilled");
    permitOf(waiting).release();
    blocker.release();
  });

  it("measures a moved request's wait from its original acquire", async () => {
    const clock = new ManualClock();
    const registry = new MediaSchedulerRegistry({ clock, download: { maxBytesInFlight: UNIT } });
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    const blocker = await registry
      .open({ dc: 4, direction: "download", sizeBytes: 1 })
      .acquire(UNIT);
    const held = await transfer.acquire(UNIT);
    const waiting = track(transfer.acquire(UNIT));
    await clock.advance(300);
    transfer.rebind(4);
    await clock.advance(200);
    const recorder = recordEvents();
    blocker.release();
    await grantTurn();
    recorder.stop();
    expect(recorder.events.find((e) => e.type === "grant")).toMatchObject({ waitedMs: 500, dc: 4 });
    await tick();
    permitOf(waiting).release();
    held.release();
  });

  it("validates the data centre and never echoes a URL", () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: "api.telegram.org", direction: "download" });
    expect(() => transfer.rebind(0)).toThrow(RangeError);
    expect(() => transfer.rebind(null as never)).toThrow(
      new TypeError("Expected `dc` to be an integer >= 1 or a host name, got object"),
    );
    let message = "";
    try {
      transfer.rebind("https://api.telegram.org/file/bot123456:SECRET-token/photos/file_1.jpg");
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      "Expected `dc` to be a host name without a path or URL (value not shown: it may contain a token)",
    );
    expect(transfer.dc).toBe("api.telegram.org");
  });
});

// Each statement of the seed, in its order, as a scenario.

import { describe, expect, it } from "vitest";
import { type MediaPermit, MediaSchedulerError, MediaSchedulerRegistry } from "../src/index.js";
import { grantTurn, MiB, only, permitOf, tick, track, UNIT } from "./helpers.js";

describe("what is being scheduled", () => {
  it("creates one scheduler per (data centre, direction) lazily, on the first open", () => {
    const registry = new MediaSchedulerRegistry();
    expect(registry.size).toBe(0);
    const a = registry.open({ dc: 2, direction: "download", sizeBytes: 10 });
    expect(registry.size).toBe(1);
    const b = registry.open({ dc: 2, direction: "download", sizeBytes: 10 });
    expect(registry.size).toBe(1);
    expect(b.schedulerSnapshot().transfers.map((t) => t.transferId)).toEqual([a.id, b.id]);
    const c = registry.open({ dc: 2, direction: "upload", sizeBytes: 10 });
    const d = registry.open({ dc: 4, direction: "download", sizeBytes: 10 });
    expect(registry.size).toBe(3);
    expect([c, d].map((t) => t.schedulerSnapshot().transfers.length)).toEqual([1, 1]);
    expect(registry.schedulerSnapshot(2, "download")).toEqual(a.schedulerSnapshot());
    expect(registry.schedulerSnapshot(5, "download")).toBeUndefined();
    expect(registry.size).toBe(3);
  });

  it("charges each permit its request rounded up to a 64 KiB unit", async () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 1, direction: "download", sizeBytes: 5 * MiB });
    const cases: [number, number][] = [
      [1, UNIT],
      [UNIT, UNIT],
      [UNIT + 1, 2 * UNIT],
      [512 * 1024, 512 * 1024],
      [1_000_000, 16 * UNIT],
    ];
    for (const [bytes, charge] of cases) {
      const permit = await transfer.acquire(bytes);
      expect(permit.bytes).toBe(bytes);
      expect(permit.chargedBytes).toBe(charge);
      expect(transfer.schedulerSnapshot().activeBytes).toBe(charge);
      permit.release();
    }
  });

  it("returns a permit's capacity exactly once, however often it is released", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: 2 * UNIT } });
    const transfer = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const a = await transfer.acquire(UNIT);
    const b = await transfer.acquire(UNIT);
    a.release();
    a.release();
    a[Symbol.dispose]();
    await a[Symbol.asyncDispose]();
    expect(a.isReleased).toBe(true);
    expect(transfer.schedulerSnapshot().activeBytes).toBe(UNIT);
    expect(b.isReleased).toBe(false);
    b.release();
    expect(transfer.schedulerSnapshot().activeBytes).toBe(0);
    expect(registry.snapshot().counters.releases).toBe(2);
  });

  it("budgets 16 MiB per data centre for downloads and 8 MiB for uploads by default", async () => {
    const registry = new MediaSchedulerRegistry();
    for (const [direction, budget] of [
      ["download", 16 * MiB],
      ["upload", 8 * MiB],
    ] as const) {
      const transfer = registry.open({ dc: 1, direction, sizeBytes: 1 });
      const held: MediaPermit[] = [];
      for (let bytes = 0; bytes < budget; bytes += MiB) held.push(await transfer.acquire(MiB));
      expect(transfer.schedulerSnapshot().activeBytes).toBe(budget);
      const next = track(transfer.acquire(UNIT));
      await tick();
      expect(next.status).toBe("pending");
      held[0]?.release();
      await tick();
      expect(next.status).toBe("fulfilled");
      // A single request of the whole budget is allowed; one unit more never could be.
      for (const permit of [...held, permitOf(next)]) permit.release();
      (await transfer.acquire(budget)).release();
      expect(() => transfer.acquire(budget + 1)).toThrow(RangeError);
    }
  });

  it("lets five small and two large download transfers be active at once with the original's caps", async () => {
    const registry = new MediaSchedulerRegistry({
      download: { maxActiveSmallTransfers: 5, maxActiveLargeTransfers: 2 },
    });
    const open = (sizeBytes: number | undefined) =>
      registry.open({ dc: 1, direction: "download", sizeBytes });
    const small = Array.from({ length: 6 }, () => open(MiB));
    const large = Array.from({ length: 3 }, () => open(undefined));
    const smallAcquires = small.map((t) => track(t.acquire(UNIT)));
    const largeAcquires = large.map((t) => track(t.acquire(UNIT)));
    await tick();
    expect(smallAcquires.map((a) => a.status)).toEqual([...Array(5).fill("fulfilled"), "pending"]);
    expect(largeAcquires.map((a) => a.status)).toEqual(["fulfilled", "fulfilled", "pending"]);
    const snapshot = small[0]?.schedulerSnapshot();
    expect(snapshot?.smallSlotsInUse).toBe(5);
    expect(snapshot?.largeSlotsInUse).toBe(2);
    expect(snapshot?.transfersWaitingForSlot).toBe(2);
    permitOf(smallAcquires[0]).release();
    permitOf(largeAcquires[0]).release();
    await tick();
    expect(smallAcquires[5]?.status).toBe("fulfilled");
    expect(largeAcquires[2]?.status).toBe("fulfilled");
  });

  it("caps no download transfer count by default: the byte budget bounds them", async () => {
    const registry = new MediaSchedulerRegistry();
    const open = (sizeBytes: number | undefined) =>
      registry.open({ dc: 1, direction: "download", sizeBytes });
    const transfers = [
      ...Array.from({ length: 12 }, () => open(MiB)),
      ...Array.from({ length: 4 }, () => open(undefined)),
    ];
    const acquires = transfers.map((t) => track(t.acquire(UNIT)));
    await tick();
    expect(acquires.every((a) => a.status === "fulfilled")).toBe(true);
    expect(transfers[0]?.schedulerSnapshot()).toMatchObject({
      maxActiveSmallTransfers: Number.POSITIVE_INFINITY,
      maxActiveLargeTransfers: Number.POSITIVE_INFINITY,
      smallSlotsInUse: 12,
      largeSlotsInUse: 4,
      transfersWaitingForSlot: 0,
    });
    for (const a of acquires) permitOf(a).release();
  });

  it("classifies a known size at or above 20 MiB, and an unknown size, as large", () => {
    const registry = new MediaSchedulerRegistry();
    const classOf = (sizeBytes: number | undefined) =>
      registry.open({ dc: 1, direction: "download", sizeBytes }).sizeClass;
    expect(classOf(0)).toBe("small");
    expect(classOf(20 * MiB - 1)).toBe("small");
    expect(classOf(20 * MiB)).toBe("large");
    expect(classOf(2000 * MiB)).toBe("large");
    expect(classOf(undefined)).toBe("large");
  });
});

describe("fairness and priority", () => {
  it("grants round robin between transfers, not first come first served", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const blocker = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const a = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const b = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    let held = await blocker.acquire(UNIT);
    // `a` queues all three of its chunks before `b` queues any.
    const acquires = [a, a, a, b, b, b].map((t) => track(t.acquire(UNIT)));
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      held.release();
      await tick();
      const granted = acquires.filter((x) => x.status === "fulfilled" && !permitOf(x).isReleased);
      held = permitOf(only(granted));
      order.push(held.transferId);
    }
    held.release();
    expect(order).toEqual([a.id, b.id, a.id, b.id, a.id, b.id]);
  });

  it("prefers foreground requests but gives a waiting background transfer a periodic grant", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const foreground = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const background = registry.open({
      dc: 1,
      direction: "download",
      sizeBytes: 1,
      priority: "background",
    });
    let held = await foreground.acquire(UNIT);
    const waiting = track(background.acquire(UNIT));
    let foregroundGrants = 0;
    for (;;) {
      const next = track(foreground.acquire(UNIT));
      held.release();
      await tick();
      if (waiting.status === "fulfilled") {
        permitOf(waiting).release();
        await tick();
        permitOf(next).release();
        break;
      }
      foregroundGrants++;
      held = permitOf(next);
    }
    expect(foregroundGrants).toBe(8);
  });

  it("exposes queued and active bytes through the scheduler snapshot", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: 2 * UNIT } });
    const transfer = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const held = await transfer.acquire(2 * UNIT);
    const waiting = track(transfer.acquire(UNIT + 1));
    const snapshot = transfer.schedulerSnapshot();
    expect(snapshot).toMatchObject({
      activeBytes: 2 * UNIT,
      queuedBytes: 2 * UNIT,
      queuedRequests: 1,
      maxBytesInFlight: 2 * UNIT,
    });
    held.release();
    await tick();
    expect(transfer.schedulerSnapshot()).toMatchObject({ activeBytes: 2 * UNIT, queuedBytes: 0 });
    permitOf(waiting).release();
  });

  it("never lets two data centres, or uploads and downloads, contend for one budget", async () => {
    const registry = new MediaSchedulerRegistry({
      download: { maxBytesInFlight: UNIT },
      upload: { maxBytesInFlight: UNIT },
    });
    const full = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    const held = await full.acquire(UNIT);
    const otherDc = registry.open({ dc: 4, direction: "download", sizeBytes: 1 });
    const upload = registry.open({ dc: 2, direction: "upload", sizeBytes: 1 });
    const both = await Promise.all([otherDc.acquire(UNIT), upload.acquire(UNIT)]);
    expect(both.map((p) => [p.dc, p.direction])).toEqual([
      [4, "download"],
      [2, "upload"],
    ]);
    for (const permit of [held, ...both]) permit.release();
  });
});

describe("cancellation, migration and closure", () => {
  it("removes a cancelled queued acquire", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const transfer = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const held = await transfer.acquire(UNIT);
    const controller = new AbortController();
    const waiting = track(transfer.acquire(UNIT, { signal: controller.signal }));
    expect(transfer.schedulerSnapshot().queuedRequests).toBe(1);
    controller.abort(new Error("user cancelled"));
    await tick();
    expect(waiting.status).toBe("rejected");
    expect((waiting.reason as Error).message).toBe("user cancelled");
    expect(transfer.schedulerSnapshot()).toMatchObject({ queuedRequests: 0, queuedBytes: 0 });
    held.release();
    expect(transfer.schedulerSnapshot().activeBytes).toBe(0);
  });

  it("releases the just-granted capacity when cancelled right after the grant", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const blocker = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const waiting = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const held = await blocker.acquire(UNIT);
    const controller = new AbortController();
    const acquire = track(waiting.acquire(UNIT, { signal: controller.signal }));
    held.release();
    await grantTurn(); // grants to `waiting` …
    expect(waiting.schedulerSnapshot().activeBytes).toBe(UNIT);
    controller.abort(); // … and the caller gives up before it resumes
    await tick();
    expect(acquire.status).toBe("rejected");
    expect((acquire.reason as DOMException).name).toBe("AbortError");
    expect(waiting.schedulerSnapshot()).toMatchObject({ activeBytes: 0, queuedBytes: 0 });
  });

  it("rejects new and pending acquires of a closed transfer but keeps live permits charged", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const transfer = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const held = await transfer.acquire(UNIT);
    const pending = track(transfer.acquire(UNIT));
    transfer.close();
    await tick();
    expect(pending.status).toBe("rejected");
    expect(pending.reason).toBeInstanceOf(MediaSchedulerError);
    expect((pending.reason as MediaSchedulerError).code).toBe("ERR_TRANSFER_CLOSED");
    await expect(transfer.acquire(UNIT)).rejects.toMatchObject({ code: "ERR_TRANSFER_CLOSED" });
    expect(transfer.schedulerSnapshot().activeBytes).toBe(UNIT);
    expect(registry.size).toBe(1);
    held.release();
    expect(registry.size).toBe(0);
  });

  it("moves pending work to the new data centre on rebind while granted permits drain at the old one", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    const old = () => registry.schedulerSnapshot(2, "download");
    const held = await transfer.acquire(UNIT);
    const pending = track(transfer.acquire(UNIT));
    transfer.rebind(4);
    await tick();
    expect(transfer.dc).toBe(4);
    expect(pending.status).toBe("fulfilled");
    expect(permitOf(pending).dc).toBe(4);
    expect(old()?.activeBytes).toBe(UNIT);
    expect(held.dc).toBe(2);
    held.release();
    expect(old()).toBeUndefined();
    permitOf(pending).release();
  });

  it("evicts a scheduler only after it has completely drained", async () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    const held = await transfer.acquire(UNIT);
    transfer.rebind(3);
    expect(registry.schedulerSnapshot(2, "download")).toBeDefined();
    transfer.close();
    expect(registry.schedulerSnapshot(3, "download")).toBeUndefined();
    expect(registry.size).toBe(1);
    held.release();
    expect(registry.size).toBe(0);
  });

  it("closes every transfer on registry close and refuses new ones", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    const held = await transfer.acquire(UNIT);
    const pending = track(transfer.acquire(UNIT));
    const closed = track(registry.close());
    await tick();
    expect(transfer.isClosed).toBe(true);
    expect((pending.reason as MediaSchedulerError).code).toBe("ERR_TRANSFER_CLOSED");
    expect(() => registry.open({ dc: 2, direction: "download" })).toThrow(
      expect.objectContaining({ code: "ERR_REGISTRY_CLOSED" }),
    );
    expect(closed.status).toBe("pending");
    held.release();
    await tick();
    expect(closed.status).toBe("fulfilled");
  });

  it("returns capacity when a block holding a permit with `await using` throws", async () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    const chunk = async () => {
      await using permit = await transfer.acquire(UNIT);
      expect(permit.isReleased).toBe(false);
      throw new Error("network down");
    };
    await expect(chunk()).rejects.toThrow("network down");
    expect(transfer.schedulerSnapshot().activeBytes).toBe(0);
  });
});

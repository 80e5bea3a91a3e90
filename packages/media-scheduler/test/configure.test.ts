// Reconfiguring while transfers run: new limits reach existing schedulers at once, nothing
// granted is revoked, nothing waits for a grant that can no longer happen, a bad update changes
// nothing; and the registry-wide bound on waiting acquires.

import { spyLogger } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { MediaSchedulerRegistry } from "../src/index.js";
import { permitOf, tick, track, UNIT } from "./helpers.js";

describe("configure", () => {
  it("grants what fits at once when the budget grows", async () => {
    const registry = new MediaSchedulerRegistry({ upload: { maxBytesInFlight: UNIT } });
    const transfer = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
    const held = await transfer.acquire(UNIT);
    const waiting = track(transfer.acquire(UNIT));
    registry.configure({ upload: { maxBytesInFlight: 2 * UNIT } });
    await tick();
    expect(waiting.status).toBe("fulfilled");
    expect(transfer.schedulerSnapshot().maxBytesInFlight).toBe(2 * UNIT);
    held.release();
    permitOf(waiting).release();
  });

  it("revokes nothing when the budget shrinks and grants again only below it", async () => {
    const registry = new MediaSchedulerRegistry({ upload: { maxBytesInFlight: 4 * UNIT } });
    const transfer = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
    const held = await Promise.all([1, 2, 3, 4].map(() => transfer.acquire(UNIT)));
    const waiting = track(transfer.acquire(UNIT));
    registry.configure({ upload: { maxBytesInFlight: 2 * UNIT } });
    expect(transfer.schedulerSnapshot().activeBytes).toBe(4 * UNIT);
    held[0]?.release();
    held[1]?.release();
    await tick();
    expect(waiting.status).toBe("pending");
    held[2]?.release();
    await tick();
    expect(waiting.status).toBe("fulfilled");
    expect(() => transfer.acquire(2 * UNIT + 1)).toThrow(RangeError);
    held[3]?.release();
    permitOf(waiting).release();
  });

  it("rejects waiting acquires that can no longer fit, with RangeError, and warns", async () => {
    const logger = spyLogger();
    const registry = new MediaSchedulerRegistry({ logger, upload: { maxBytesInFlight: 4 * UNIT } });
    const transfer = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
    const held = await transfer.acquire(4 * UNIT);
    const small = track(transfer.acquire(UNIT));
    const large = track(transfer.acquire(3 * UNIT));
    const after = track(transfer.acquire(UNIT));
    registry.configure({ upload: { maxBytesInFlight: 2 * UNIT } });
    await tick();
    expect([small.status, large.status, after.status]).toEqual(["pending", "rejected", "pending"]);
    expect(large.reason).toEqual(
      new RangeError(
        "Expected `bytes` to be at most 131072 (the upload budget per data centre, reconfigured) once rounded up to 65536, got 196608 (charge 196608)",
      ),
    );
    expect(logger.calls).toContainEqual({
      level: "warn",
      fields: { dc: 1, direction: "upload", rejected: 1 },
      message: "waiting acquires rejected: their charge exceeds the reconfigured budget",
    });
    expect(registry.snapshot().counters.rejectedOverBudget).toBe(1);
    held.release();
    await tick();
    expect([small.status, after.status]).toEqual(["fulfilled", "fulfilled"]);
    permitOf(small).release();
    permitOf(after).release();
  });

  it("admits no new transfer past a lowered slot cap until enough go idle", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxActiveSmallTransfers: 3 } });
    const open = () => registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const active = [open(), open(), open()];
    const held = await Promise.all(active.map((t) => t.acquire(UNIT)));
    registry.configure({ download: { maxActiveSmallTransfers: 1 } });
    const waiting = track(open().acquire(UNIT));
    held[0]?.release();
    held[1]?.release();
    await tick();
    expect(waiting.status).toBe("pending");
    expect(active[0]?.schedulerSnapshot().smallSlotsInUse).toBe(1);
    held[2]?.release();
    await tick();
    expect(waiting.status).toBe("fulfilled");
    permitOf(waiting).release();
  });

  it("changes the background grant interval of running schedulers", async () => {
    const registry = new MediaSchedulerRegistry({ upload: { maxBytesInFlight: UNIT } });
    const fg = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
    const bg = registry.open({ dc: 1, direction: "upload", sizeBytes: 1, priority: "background" });
    let held = await fg.acquire(UNIT);
    const background = track(bg.acquire(UNIT));
    const foreground = [1, 2, 3].map(() => track(fg.acquire(UNIT)));
    held.release();
    await tick();
    held = permitOf(foreground[0]);
    registry.configure({ backgroundGrantInterval: 1 });
    held.release();
    await tick();
    expect(background.status).toBe("fulfilled");
    expect(foreground[1]?.status).toBe("pending");
    permitOf(background).release();
    await tick();
    permitOf(foreground[1]).release();
    await tick();
    permitOf(foreground[2]).release();
  });

  it("validates the whole update first, so a bad one changes nothing", () => {
    const registry = new MediaSchedulerRegistry();
    const before = registry.limits;
    expect(() =>
      registry.configure({
        download: { maxBytesInFlight: 4 * UNIT },
        upload: { maxActiveSmallTransfers: 0 },
      }),
    ).toThrow(
      new RangeError(
        "Expected `upload.maxActiveSmallTransfers` to be an integer >= 1 or Infinity, got 0",
      ),
    );
    expect(registry.limits).toBe(before);
    expect(() => registry.configure(null as never)).toThrow(TypeError);
    expect(() => registry.configure({ download: 5 } as never)).toThrow(
      new TypeError("Expected `download` to be an object, got 5"),
    );
  });
});

describe("the bound on waiting acquires", () => {
  it("rejects one acquire past maxQueuedAcquires with ERR_QUEUE_FULL, across schedulers", async () => {
    const registry = new MediaSchedulerRegistry({
      maxQueuedAcquires: 2,
      download: { maxBytesInFlight: UNIT },
    });
    const a = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const b = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    const held = [await a.acquire(UNIT), await b.acquire(UNIT)];
    const queued = [track(a.acquire(UNIT)), track(b.acquire(UNIT))];
    await expect(a.acquire(UNIT)).rejects.toMatchObject({
      code: "ERR_QUEUE_FULL",
      message: "2 acquires are already waiting (maxQueuedAcquires is 2)",
    });
    expect(registry.snapshot()).toMatchObject({
      queuedRequests: 2,
      maxQueuedAcquires: 2,
      counters: expect.objectContaining({ rejectedQueueFull: 1 }),
    });
    // A rebind moves requests (here into another full scheduler) without counting them twice.
    a.rebind(2);
    expect(registry.snapshot().queuedRequests).toBe(2);
    registry.configure({ maxQueuedAcquires: 3 });
    const third = track(b.acquire(UNIT));
    await tick();
    expect(third.status).toBe("pending");
    expect(registry.snapshot().queuedRequests).toBe(3);
    const closing = registry.close();
    for (const permit of held) permit.release();
    await closing;
    expect([...queued, third].map((q) => q.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(registry.snapshot().queuedRequests).toBe(0);
  });
});

// Behaviours of the original implementation that the seed does not spell out (research/media.md
// section 1): its test scenarios, then its unwritten rules, one by one.

import { describe, expect, it } from "vitest";
import { type MediaPermit, MediaSchedulerError, MediaSchedulerRegistry } from "../src/index.js";
import { MiB, only, permitOf, tick, track, UNIT } from "./helpers.js";

describe("the original's test scenarios", () => {
  it("enforces the byte cap and resumes after the last granted transfer", async () => {
    const registry = new MediaSchedulerRegistry({
      download: { maxBytesInFlight: 2 * UNIT },
      upload: { maxBytesInFlight: UNIT },
    });
    const first = registry.open({ dc: 2, direction: "download", sizeBytes: 1024 });
    const second = registry.open({ dc: 2, direction: "download", sizeBytes: 1024 });
    const firstPermit = await first.acquire(2 * UNIT);
    const firstWaiter = track(first.acquire(2 * UNIT));
    const secondWaiter = track(second.acquire(2 * UNIT));
    await tick();
    expect(firstWaiter.status).toBe("pending");
    expect(secondWaiter.status).toBe("pending");
    expect(first.schedulerSnapshot().activeBytes).toBe(2 * UNIT);
    // `first` queued earlier, but it was granted last: `second` goes next.
    firstPermit.release();
    await tick();
    expect(secondWaiter.status).toBe("fulfilled");
    expect(firstWaiter.status).toBe("pending");
    expect(second.schedulerSnapshot().activeBytes).toBe(2 * UNIT);
    permitOf(secondWaiter).release();
    await tick();
    permitOf(firstWaiter).release();
    first.close();
    second.close();
    expect(registry.size).toBe(0);
  });

  it("uses the remaining byte capacity while another transfer is active", async () => {
    const registry = new MediaSchedulerRegistry({
      download: { maxBytesInFlight: 4 * UNIT, maxActiveSmallTransfers: 2 },
    });
    const first = registry.open({ dc: 2, direction: "download", sizeBytes: 1024 });
    const second = registry.open({ dc: 2, direction: "download", sizeBytes: 1024 });
    const firstPermit = await first.acquire(2 * UNIT);
    const secondPermit = await second.acquire(2 * UNIT);
    expect(first.schedulerSnapshot().activeBytes).toBe(4 * UNIT);
    firstPermit.release();
    secondPermit.release();
  });

  it("puts foreground before background without starving background", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const blocker = registry.open({ dc: 2, direction: "download", sizeBytes: 1024 });
    const foreground = registry.open({ dc: 2, direction: "download", sizeBytes: 1024 });
    const background = registry.open({
      dc: 2,
      direction: "download",
      sizeBytes: 1024,
      priority: "background",
    });
    const blockerPermit = await blocker.acquire(UNIT);
    const backgroundWaiter = track(background.acquire(UNIT));
    const foregroundWaiter = track(foreground.acquire(UNIT));
    await tick();
    blockerPermit.release();
    await tick();
    expect(foregroundWaiter.status).toBe("fulfilled");
    expect(backgroundWaiter.status).toBe("pending");
    let held = permitOf(foregroundWaiter);
    let next = track(Promise.resolve(held));
    let rounds = 0;
    for (; rounds < 8 && backgroundWaiter.status === "pending"; rounds++) {
      next = track(foreground.acquire(UNIT));
      held.release();
      await tick();
      held = next.status === "fulfilled" ? permitOf(next) : permitOf(backgroundWaiter);
    }
    expect(backgroundWaiter.status).toBe("fulfilled");
    expect(rounds).toBeLessThanOrEqual(8);
    held.release();
    await tick();
    // The foreground acquire queued in the last round is granted once background releases.
    permitOf(next).release();
    for (const t of [blocker, foreground, background]) t.close();
    await tick();
    expect(registry.size).toBe(0);
  });

  it("separates data centres, directions and download size classes", async () => {
    const registry = new MediaSchedulerRegistry({
      download: {
        maxBytesInFlight: 2 * UNIT,
        maxActiveSmallTransfers: 1,
        maxActiveLargeTransfers: 1,
      },
      upload: { maxBytesInFlight: UNIT },
    });
    const small = registry.open({ dc: 2, direction: "download", sizeBytes: 1024 });
    const otherSmall = registry.open({ dc: 2, direction: "download", sizeBytes: 1024 });
    const large = registry.open({ dc: 2, direction: "download", sizeBytes: 20 * MiB });
    const otherDc = registry.open({ dc: 4, direction: "download", sizeBytes: 1024 });
    const upload = registry.open({ dc: 2, direction: "upload", sizeBytes: 1024 });
    const smallPermit = await small.acquire(UNIT);
    const otherSmallWaiter = track(otherSmall.acquire(UNIT));
    const largeWaiter = track(large.acquire(UNIT));
    await tick();
    expect(otherSmallWaiter.status).toBe("pending");
    expect(largeWaiter.status).toBe("fulfilled");
    const [otherDcPermit, uploadPermit] = await Promise.all([
      otherDc.acquire(UNIT),
      upload.acquire(UNIT),
    ]);
    otherDcPermit.release();
    uploadPermit.release();
    smallPermit.release();
    await tick();
    expect(otherSmallWaiter.status).toBe("fulfilled");
    permitOf(largeWaiter).release();
    permitOf(otherSmallWaiter).release();
    for (const t of [small, otherSmall, large, otherDc, upload]) t.close();
    expect(registry.size).toBe(0);
  });

  it("leaks neither permits nor idle schedulers through cancellation and rebind", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const transfer = registry.open({ dc: 2, direction: "download" });
    const permit = await transfer.acquire(UNIT);
    const controller = new AbortController();
    const waiter = track(transfer.acquire(UNIT, { signal: controller.signal }));
    await tick();
    controller.abort();
    await tick();
    expect(waiter.status).toBe("rejected");
    permit.release();
    expect(transfer.schedulerSnapshot()).toMatchObject({ activeBytes: 0, queuedBytes: 0 });
    transfer.rebind(4);
    expect(transfer.dc).toBe(4);
    (await transfer.acquire(UNIT)).release();
    transfer.close();
    expect(registry.size).toBe(0);
  });

  it("releases a grant cancelled before the waiter resumes", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const blocker = registry.open({ dc: 2, direction: "download", sizeBytes: 1024 });
    const waiting = registry.open({ dc: 2, direction: "download", sizeBytes: 1024 });
    const blockerPermit = await blocker.acquire(UNIT);
    const controller = new AbortController();
    const waiter = track(waiting.acquire(UNIT, { signal: controller.signal }));
    await tick();
    queueMicrotask(() => controller.abort());
    blockerPermit.release();
    await tick();
    expect(waiter.status).toBe("rejected");
    expect(waiting.schedulerSnapshot()).toMatchObject({ activeBytes: 0, queuedBytes: 0 });
    blocker.close();
    waiting.close();
    expect(registry.size).toBe(0);
  });

  it("removes the waiter from the destination scheduler when cancelled after a rebind", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const blocker4 = registry.open({ dc: 4, direction: "download", sizeBytes: 1 });
    const held4 = await blocker4.acquire(UNIT);
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    const held2 = await transfer.acquire(UNIT);
    const controller = new AbortController();
    const waiter = track(transfer.acquire(UNIT, { signal: controller.signal }));
    transfer.rebind(4);
    const destination = () => registry.schedulerSnapshot(4, "download");
    expect(destination()?.queuedRequests).toBe(1);
    controller.abort();
    await tick();
    expect(waiter.status).toBe("rejected");
    expect(destination()).toMatchObject({ queuedRequests: 0, queuedBytes: 0 });
    held2.release();
    held4.release();
    transfer.close();
    blocker4.close();
    expect(registry.size).toBe(0);
  });

  it("rejects a request larger than the configured cap at once", () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1024 });
    expect(() => transfer.acquire(2 * UNIT)).toThrow(
      new RangeError(
        "Expected `bytes` to be at most 65536 (the download budget per data centre) once rounded up to 65536, got 131072 (charge 131072)",
      ),
    );
    expect(transfer.schedulerSnapshot().queuedRequests).toBe(0);
  });

  it.each([
    ["download.maxBytesInFlight", { download: { maxBytesInFlight: UNIT - 1 } }],
    ["upload.maxBytesInFlight", { upload: { maxBytesInFlight: 0 } }],
    ["download.maxActiveSmallTransfers", { download: { maxActiveSmallTransfers: 0 } }],
    ["download.maxActiveLargeTransfers", { download: { maxActiveLargeTransfers: -1 } }],
  ])("rejects an invalid limit, naming it: %s", (name, options) => {
    expect(() => new MediaSchedulerRegistry(options)).toThrow(RangeError);
    expect(() => new MediaSchedulerRegistry(options)).toThrow(`\`${name}\``);
  });
});

describe("the original's unwritten rules", () => {
  it("rejects zero, negative and fractional acquires at once", () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    for (const bytes of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => transfer.acquire(bytes)).toThrow(
        new RangeError(`Expected \`bytes\` to be an integer >= 1, got ${bytes}`),
      );
    }
    expect(() => transfer.acquire("1" as never)).toThrow(TypeError);
  });

  it("validates open(): a positive DC id, known direction and priority, a size >= 0", () => {
    const registry = new MediaSchedulerRegistry();
    const open = (options: object) => () =>
      registry.open({ dc: 2, direction: "download", ...options } as never);
    expect(open({ dc: 0 })).toThrow("Expected `dc` to be an integer >= 1 or a host name, got 0");
    expect(open({ dc: 1.5 })).toThrow(RangeError);
    expect(open({ direction: "sideways" })).toThrow(
      'Expected `direction` to be "download" or "upload", got "sideways"',
    );
    expect(open({ priority: "urgent" })).toThrow(
      'Expected `priority` to be "foreground" or "background", got "urgent"',
    );
    expect(open({ sizeBytes: -1 })).toThrow("Expected `sizeBytes` to be an integer >= 0, got -1");
    expect(open({ sizeBytes: 0 })).not.toThrow();
    expect(registry.snapshot().openTransfers).toBe(1);
  });

  it("numbers transfers `<direction>-<n>` with one counter per registry", () => {
    const registry = new MediaSchedulerRegistry();
    const ids = (["download", "upload", "download"] as const).map(
      (direction) => registry.open({ dc: 1, direction }).id,
    );
    expect(ids).toEqual(["download-1", "upload-2", "download-3"]);
    expect(new MediaSchedulerRegistry().open({ dc: 1, direction: "upload" }).id).toBe("upload-1");
  });

  it("lets one acquire override the transfer's priority; the head request decides the class", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: UNIT } });
    const blocker = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const mixed = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const plain = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    let held = await blocker.acquire(UNIT);
    const mixedBackground = track(mixed.acquire(UNIT, { priority: "background" }));
    const mixedForeground = track(mixed.acquire(UNIT));
    const plainForeground = track(plain.acquire(UNIT));
    expect(
      only(mixed.schedulerSnapshot().transfers.filter((t) => t.transferId === mixed.id)),
    ).toMatchObject({ headPriority: "background" });
    held.release();
    await tick();
    // `mixed` queued first, but its head is background: the foreground transfer goes first.
    expect(plainForeground.status).toBe("fulfilled");
    held = permitOf(plainForeground);
    held.release();
    await tick();
    // Only background is left at the head of `mixed`: it is served (nothing foreground waits).
    expect(mixedBackground.status).toBe("fulfilled");
    expect(permitOf(mixedBackground).priority).toBe("background");
    permitOf(mixedBackground).release();
    await tick();
    expect(permitOf(mixedForeground).priority).toBe("foreground");
    permitOf(mixedForeground).release();
  });

  it("resets the background counter on every background grant", async () => {
    const registry = new MediaSchedulerRegistry({
      download: { maxBytesInFlight: UNIT },
      backgroundGrantInterval: 2,
    });
    const fg = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const bg = registry.open({
      dc: 1,
      direction: "download",
      sizeBytes: 1,
      priority: "background",
    });
    let held = await fg.acquire(UNIT);
    const fgAcquires = Array.from({ length: 6 }, () => track(fg.acquire(UNIT)));
    const bgAcquires = Array.from({ length: 2 }, () => track(bg.acquire(UNIT)));
    const order: string[] = [];
    for (let i = 0; i < 8; i++) {
      held.release();
      await tick();
      const granted = only(
        [...fgAcquires, ...bgAcquires].filter(
          (a) => a.status === "fulfilled" && !permitOf(a).isReleased,
        ),
      );
      held = permitOf(granted);
      order.push(held.priority === "foreground" ? "F" : "B");
      // Counted only while a background request waits; reset by every background grant.
      const backgroundWaits = bgAcquires.some((a) => a.status === "pending");
      expect(fg.schedulerSnapshot().foregroundGrantsSinceBackground).toBe(
        backgroundWaits ? order.length - order.lastIndexOf("B") - 1 : 0,
      );
    }
    held.release();
    expect(order.join("")).toBe("FFBFFBFF");
  });

  it("checks size-class slots only for a transfer with no live permit", async () => {
    const registry = new MediaSchedulerRegistry({
      download: { maxActiveSmallTransfers: 1 },
    });
    const active = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const other = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const first = await active.acquire(UNIT);
    // The active transfer adds permits without a second slot …
    const more = await Promise.all([active.acquire(UNIT), active.acquire(UNIT)]);
    // … while another small transfer waits for the one slot.
    const waiting = track(other.acquire(UNIT));
    await tick();
    expect(waiting.status).toBe("pending");
    expect(other.schedulerSnapshot().smallSlotsInUse).toBe(1);
    first.release();
    more[0]?.release();
    await tick();
    expect(waiting.status).toBe("pending");
    more[1]?.release();
    await tick();
    expect(waiting.status).toBe("fulfilled");
    permitOf(waiting).release();
  });

  it("puts no cap on active upload transfers by default", async () => {
    const registry = new MediaSchedulerRegistry();
    const permits: MediaPermit[] = [];
    for (let i = 0; i < 40; i++) {
      const transfer = registry.open({
        dc: 1,
        direction: "upload",
        sizeBytes: i % 2 ? 1 : undefined,
      });
      permits.push(await transfer.acquire(UNIT));
    }
    const snapshot = registry.schedulerSnapshot(1, "upload");
    expect(snapshot).toMatchObject({
      smallSlotsInUse: 20,
      largeSlotsInUse: 20,
      activeTransfers: 40,
    });
    expect(snapshot?.maxActiveSmallTransfers).toBe(Number.POSITIVE_INFINITY);
    for (const permit of permits) permit.release();
  });

  it("applies new slot limits to existing download schedulers and dispatches at once", async () => {
    const registry = new MediaSchedulerRegistry({
      download: { maxActiveSmallTransfers: 1, maxActiveLargeTransfers: 1 },
    });
    const transfers = Array.from({ length: 3 }, () =>
      registry.open({ dc: 1, direction: "download", sizeBytes: 1 }),
    );
    const acquires = transfers.map((t) => track(t.acquire(UNIT)));
    await tick();
    expect(acquires.map((a) => a.status)).toEqual(["fulfilled", "pending", "pending"]);
    registry.configure({ download: { maxActiveSmallTransfers: 3 } });
    await tick();
    expect(acquires.map((a) => a.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    expect(registry.limits.download).toEqual({
      maxBytesInFlight: 16 * MiB,
      maxActiveSmallTransfers: 3,
      maxActiveLargeTransfers: 1,
      maxLargeBytesInFlight: 4 * MiB,
    });
    for (const a of acquires) permitOf(a).release();
  });

  it("does nothing when rebinding to the current data centre; refuses a closed transfer", async () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    transfer.rebind(2);
    expect(transfer.schedulerSnapshot().dc).toBe(2);
    expect(registry.size).toBe(1);
    expect(registry.snapshot().counters.rebinds).toBe(0);
    transfer.close();
    expect(() => transfer.rebind(3)).toThrow(
      expect.objectContaining({ code: "ERR_TRANSFER_CLOSED" }),
    );
    expect(() => transfer.rebind(3)).toThrow(MediaSchedulerError);
  });

  it("keeps every binding of a rebound transfer until it drains, and close releases them all", async () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const at1 = await transfer.acquire(UNIT);
    transfer.rebind(2);
    const at2 = await transfer.acquire(UNIT);
    transfer.rebind(3);
    expect(transfer.snapshot().drainingDcs).toEqual([1, 2]);
    expect(registry.size).toBe(3);
    transfer.close();
    expect(registry.size).toBe(2);
    at1.release();
    expect(transfer.snapshot().drainingDcs).toEqual([2]);
    at2.release();
    expect(registry.size).toBe(0);
    expect(transfer.snapshot()).toMatchObject({
      grants: 2,
      grantedBytes: 2 * UNIT,
      livePermits: 0,
    });
  });

  it("reports the original's snapshot fields, for the transfer's current scheduler", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: 2 * UNIT } });
    const a = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const b = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const held = await a.acquire(2 * UNIT);
    const waiting = track(b.acquire(UNIT));
    const snapshot = a.schedulerSnapshot();
    expect(snapshot).toMatchObject({
      maxBytesInFlight: 2 * UNIT,
      activeBytes: 2 * UNIT,
      queuedBytes: UNIT,
      activeTransfers: 1,
      queuedTransfers: 1,
      grants: 1,
    });
    expect(snapshot.transfers.map((t) => [t.transferId, t.grants])).toEqual([
      [a.id, 1],
      [b.id, 0],
    ]);
    b.rebind(2);
    expect(b.schedulerSnapshot().dc).toBe(2);
    held.release();
    await tick();
    permitOf(waiting).release();
  });
});

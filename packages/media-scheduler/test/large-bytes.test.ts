// Large transfers hold at most `maxLargeBytesInFlight` together: small transfers use the rest of
// the budget without waiting behind them, and large ones still get their turns.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type MediaPermit, MediaSchedulerRegistry } from "../src/index.js";
import { GrantLog, MiB, permitOf, tick, track, UNIT } from "./helpers.js";

function setup(largeUnits: number, budgetUnits = 8) {
  const registry = new MediaSchedulerRegistry({
    download: {
      maxBytesInFlight: budgetUnits * UNIT,
      maxLargeBytesInFlight: largeUnits * UNIT,
      maxActiveSmallTransfers: Number.POSITIVE_INFINITY,
    },
  });
  const large = registry.open({ dc: 1, direction: "download" }); // unknown size: large
  const small = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
  return { registry, large, small };
}

describe("maxLargeBytesInFlight", () => {
  it("keeps large transfers to their bytes and lets small ones past them", async () => {
    const { registry, large, small } = setup(2);
    const larges = Array.from({ length: 6 }, () => track(large.acquire(UNIT)));
    await tick();
    expect(larges.map((a) => a.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "pending",
      "pending",
      "pending",
      "pending",
    ]);
    expect(large.schedulerSnapshot()).toMatchObject({
      largeActiveBytes: 2 * UNIT,
      transfersWaitingForLargeBytes: 1,
    });
    expect(large.snapshot().queuedRequests).toBe(4);
    // A small file is served at once from the bytes large transfers may not use.
    const smalls = [track(small.acquire(UNIT)), track(small.acquire(3 * UNIT))];
    await tick();
    expect(smalls.map((a) => a.status)).toEqual(["fulfilled", "fulfilled"]);
    // A large release lets the next large request in.
    permitOf(larges[0]).release();
    await tick();
    expect(larges.map((a) => a.status).filter((s) => s === "fulfilled")).toHaveLength(3);
    expect(large.schedulerSnapshot().largeActiveBytes).toBe(2 * UNIT);
    const closing = registry.close();
    for (const a of [...larges, ...smalls])
      if (a.status === "fulfilled") (a.value as MediaPermit).release();
    await closing;
  });

  it("grants a large request bigger than the class cap when no large bytes are live", async () => {
    const { large } = setup(1);
    const permit = await large.acquire(3 * UNIT);
    expect(permit.chargedBytes).toBe(3 * UNIT);
    const next = track(large.acquire(UNIT));
    await tick();
    expect(next.status).toBe("pending");
    permit.release();
    await tick();
    expect(next.status).toBe("fulfilled");
    (next.value as MediaPermit).release();
  });

  it("lets configure() raise the cap and readmit waiting large transfers at once", async () => {
    const { registry, large } = setup(1);
    const acquires = Array.from({ length: 3 }, () => track(large.acquire(UNIT)));
    await tick();
    expect(acquires.map((a) => a.status)).toEqual(["fulfilled", "pending", "pending"]);
    registry.configure({ download: { maxLargeBytesInFlight: 3 * UNIT } });
    await tick();
    expect(acquires.map((a) => a.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    expect(registry.limits.download.maxLargeBytesInFlight).toBe(3 * UNIT);
    for (const a of acquires) (a.value as MediaPermit).release();
  });

  it("forgets a large transfer waiting for its bytes when its requests abort or it closes", async () => {
    const { registry, large } = setup(1);
    const held = await large.acquire(UNIT);
    const controller = new AbortController();
    const waiting = track(large.acquire(UNIT, { signal: controller.signal }));
    await tick();
    expect(large.schedulerSnapshot().transfersWaitingForLargeBytes).toBe(1);
    controller.abort();
    await tick();
    expect(waiting.status).toBe("rejected");
    expect(large.schedulerSnapshot().transfersWaitingForLargeBytes).toBe(0);
    const later = track(large.acquire(UNIT));
    await tick();
    large.close();
    await tick();
    expect(later.reason).toMatchObject({ code: "ERR_TRANSFER_CLOSED" });
    held.release();
    await registry.close();
    expect(registry.size).toBe(0);
  });

  it("validates the option and takes Infinity for no separate cap", () => {
    expect(() => new MediaSchedulerRegistry({ download: { maxLargeBytesInFlight: 1000 } })).toThrow(
      new RangeError(
        "Expected `download.maxLargeBytesInFlight` to be an integer >= 65536 or Infinity, got 1000",
      ),
    );
    const registry = new MediaSchedulerRegistry({
      download: { maxLargeBytesInFlight: Number.POSITIVE_INFINITY },
    });
    expect(registry.limits.download.maxLargeBytesInFlight).toBe(Number.POSITIVE_INFINITY);
    expect(registry.limits.download.maxBytesInFlight).toBe(16 * MiB);
  });

  it("never starves large transfers and never lets them past their cap, for any release order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 30, maxLength: 30 }),
        fc.array(fc.nat(), { minLength: 60, maxLength: 60 }),
        async (largeUnits, smallSizes, releaseOrder) => {
          const { registry, large, small } = setup(largeUnits, 6);
          const log = new GrantLog();
          for (let i = 0; i < 30; i++) log.watch(large.acquire(UNIT));
          for (const units of smallSizes) log.watch(small.acquire(units * UNIT));
          await tick();
          let sinceLarge = 0;
          let longestWithoutLarge = 0;
          let counted = 0;
          for (const index of releaseOrder) {
            const snapshot = large.schedulerSnapshot();
            expect(snapshot.largeActiveBytes).toBeLessThanOrEqual(largeUnits * UNIT);
            expect(snapshot.activeBytes).toBeLessThanOrEqual(6 * UNIT);
            log.release(index);
            await tick();
            for (; counted < log.grants.length; counted++) {
              if (log.grants[counted]?.transferId === large.id) sinceLarge = 0;
              else longestWithoutLarge = Math.max(longestWithoutLarge, ++sinceLarge);
            }
          }
          // Small transfers never run far ahead: the round robin gives the large one its turns.
          if (large.snapshot().queuedRequests > 0)
            expect(longestWithoutLarge).toBeLessThanOrEqual(30);
          expect(large.snapshot().grants).toBeGreaterThan(0);
          const closing = registry.close();
          for (const permit of log.held.splice(0)) permit.release();
          await closing;
          expect(registry.size).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  });
});

type Step =
  | { kind: "acquire"; transfer: number; units: number; abortable: boolean }
  | { kind: "abort"; index: number }
  | { kind: "release"; index: number }
  | { kind: "rebind"; transfer: number; dc: number }
  | { kind: "close"; transfer: number }
  | { kind: "configure"; largeUnits: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("acquire" as const),
      transfer: fc.nat(),
      units: fc.integer({ min: 1, max: 3 }),
      abortable: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("abort" as const), index: fc.nat() }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("release" as const), index: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("rebind" as const),
      transfer: fc.nat(),
      dc: fc.integer({ min: 1, max: 2 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("close" as const), transfer: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("configure" as const),
      largeUnits: fc.integer({ min: 1, max: 4 }),
    }),
  },
);

describe("maxLargeBytesInFlight under random interleavings", () => {
  it("holds the class cap, conserves bytes and never deadlocks", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 20, maxLength: 60 }), async (steps) => {
        let largeUnits = 2;
        let highestLargeUnits = largeUnits;
        const registry = new MediaSchedulerRegistry({
          download: {
            maxBytesInFlight: 6 * UNIT,
            maxLargeBytesInFlight: largeUnits * UNIT,
            maxActiveLargeTransfers: 2,
          },
        });
        // Three large transfers (unknown size) and two small ones.
        const transfers = [undefined, undefined, undefined, 1, 1].map((sizeBytes) =>
          registry.open({ dc: 1, direction: "download", sizeBytes }),
        );
        const held: MediaPermit[] = [];
        const pending: { controller: AbortController | undefined; settled: boolean }[] = [];
        for (const next of steps) {
          const transfer = transfers[("transfer" in next ? next.transfer : 0) % transfers.length];
          if (transfer === undefined) continue;
          if (next.kind === "acquire" && !transfer.isClosed) {
            const controller = next.abortable ? new AbortController() : undefined;
            const entry = { controller, settled: false };
            pending.push(entry);
            transfer.acquire(next.units * UNIT, { signal: controller?.signal }).then(
              (permit) => {
                entry.settled = true;
                held.push(permit);
              },
              () => {
                entry.settled = true;
              },
            );
          } else if (next.kind === "abort") {
            const open = pending.filter((p) => !p.settled && p.controller !== undefined);
            open[next.index % Math.max(1, open.length)]?.controller?.abort();
          } else if (next.kind === "release") {
            held.splice(next.index % Math.max(1, held.length), 1)[0]?.release();
          } else if (next.kind === "rebind" && !transfer.isClosed) {
            transfer.rebind(next.dc);
          } else if (next.kind === "close") {
            transfer.close();
          } else if (next.kind === "configure") {
            largeUnits = next.largeUnits;
            highestLargeUnits = Math.max(highestLargeUnits, largeUnits);
            registry.configure({ download: { maxLargeBytesInFlight: largeUnits * UNIT } });
          }
          await tick();
          for (const scheduler of registry.snapshot().schedulers) {
            const live = held.filter((p) => p.dc === scheduler.dc);
            const largeLive = live.filter(
              (p) => transfers.find((t) => t.id === p.transferId)?.sizeClass === "large",
            );
            expect(scheduler.activeBytes).toBe(live.reduce((sum, p) => sum + p.chargedBytes, 0));
            expect(scheduler.largeActiveBytes).toBe(
              largeLive.reduce((sum, p) => sum + p.chargedBytes, 0),
            );
            // Past the cap only by one request granted while no large bytes were live, or by
            // permits granted before configure() lowered it.
            if (largeLive.length > 1) {
              expect(scheduler.largeActiveBytes).toBeLessThanOrEqual(highestLargeUnits * UNIT);
            }
            // No deadlock: with nothing live, nothing waits.
            if (scheduler.activeBytes === 0) expect(scheduler.queuedRequests).toBe(0);
            if (scheduler.largeActiveBytes === 0)
              expect(scheduler.transfersWaitingForLargeBytes).toBe(0);
          }
        }
        const closing = registry.close();
        await tick();
        for (const permit of held.splice(0)) permit.release();
        await closing;
        await tick();
        expect(pending.every((p) => p.settled)).toBe(true);
        expect(registry.size).toBe(0);
      }),
      { numRuns: 150 },
    );
  });
});

// Large transfers hold at most `maxLargeBytesInFlight` together: small transfers use the rest of
// the budget without waiting behind them, and large ones still get their turns.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type MediaPermit, MediaSchedulerRegistry } from "../src/index.js";
import { MiB, permitOf, tick, track, UNIT } from "./helpers.js";

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
        "Expected `download.maxLargeBytesInFlight` to be an integer >= 65536, got 1000",
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
          const held: MediaPermit[] = [];
          const grants: string[] = [];
          const watch = (acquire: Promise<MediaPermit>) =>
            acquire.then(
              (permit) => {
                held.push(permit);
                grants.push(permit.transferId);
              },
              () => undefined,
            );
          for (let i = 0; i < 30; i++) watch(large.acquire(UNIT));
          for (const units of smallSizes) watch(small.acquire(units * UNIT));
          await tick();
          let sinceLarge = 0;
          let longestWithoutLarge = 0;
          let counted = 0;
          for (const index of releaseOrder) {
            const snapshot = large.schedulerSnapshot();
            expect(snapshot.largeActiveBytes).toBeLessThanOrEqual(largeUnits * UNIT);
            expect(snapshot.activeBytes).toBeLessThanOrEqual(6 * UNIT);
            const [permit] = held.splice(index % Math.max(1, held.length), 1);
            permit?.release();
            await tick();
            for (; counted < grants.length; counted++) {
              if (grants[counted] === large.id) sinceLarge = 0;
              else longestWithoutLarge = Math.max(longestWithoutLarge, ++sinceLarge);
            }
          }
          // Small transfers never run far ahead: the round robin gives the large one its turns.
          if (large.snapshot().queuedRequests > 0)
            expect(longestWithoutLarge).toBeLessThanOrEqual(30);
          expect(large.snapshot().grants).toBeGreaterThan(0);
          const closing = registry.close();
          for (const permit of held.splice(0)) permit.release();
          await closing;
          expect(registry.size).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  });
});

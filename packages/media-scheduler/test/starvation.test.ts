// The background starvation bound: while a background request waits, at most
// `backgroundGrantInterval` foreground grants happen before a background grant — also when the
// background request is far larger than the foreground ones, because capacity is reserved for it.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type MediaPermit, MediaSchedulerRegistry } from "../src/index.js";
import { GrantLog, MiB, tick, UNIT } from "./helpers.js";

describe("background starvation bound", () => {
  it("serves a large background request against a stream of small foreground ones that fit", async () => {
    const registry = new MediaSchedulerRegistry({ download: { maxBytesInFlight: 8 * UNIT } });
    const foreground = Array.from({ length: 3 }, () =>
      registry.open({ dc: 1, direction: "download", sizeBytes: MiB }),
    );
    const background = registry.open({
      dc: 1,
      direction: "download",
      sizeBytes: MiB,
      priority: "background",
    });
    const log = new GrantLog((error) =>
      expect(error).toMatchObject({ code: "ERR_TRANSFER_CLOSED" }),
    );
    const isBackground = (permit: MediaPermit) => permit.priority === "background";
    // Each foreground transfer keeps its pipeline full: two small chunks always queued.
    for (const transfer of foreground) {
      for (let i = 0; i < 3; i++) log.watch(transfer.acquire(UNIT));
    }
    await tick();
    // The background request needs the whole budget; the original would starve it forever.
    log.watch(background.acquire(8 * UNIT));
    for (let step = 0; step < 40 && !log.grants.some(isBackground); step++) {
      const permit = log.held.shift() as MediaPermit;
      const transfer = foreground.find((t) => t.id === permit.transferId);
      permit.release();
      if (transfer !== undefined) log.watch(transfer.acquire(UNIT));
      await tick();
    }
    const afterBackgroundQueued = log.grants.slice(8).map((p) => (isBackground(p) ? "B" : "f"));
    expect(afterBackgroundQueued.join("")).toBe("ffffffffB");
    // While capacity drained for it, the foreground requests that would have fit were held back.
    const scheduler = background.schedulerSnapshot();
    // One request was queued when background arrived, and each of the 8 releases while capacity
    // was reserved queued another without granting it.
    expect(scheduler.activeBytes).toBe(8 * UNIT);
    expect(scheduler.queuedRequests).toBe(9);
    const closing = registry.close();
    for (const permit of log.held) permit.release();
    await closing;
  });

  it("keeps the bound for any mix of sizes, transfers and release orders", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 16 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 30, maxLength: 30 }), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.array(fc.array(fc.integer({ min: 1, max: 16 }), { minLength: 1, maxLength: 4 }), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.array(fc.nat(), { minLength: 80, maxLength: 80 }),
        async (budgetUnits, interval, foregroundSizes, backgroundSizes, releaseOrder) => {
          const registry = new MediaSchedulerRegistry({
            upload: { maxBytesInFlight: budgetUnits * UNIT },
            backgroundGrantInterval: interval,
          });
          const open = (priority: "foreground" | "background") =>
            registry.open({ dc: 1, direction: "upload", sizeBytes: 1, priority });
          const log = new GrantLog();
          const fit = (units: number) => Math.min(units, budgetUnits) * UNIT;
          for (const sizes of foregroundSizes) {
            const transfer = open("foreground");
            for (const units of sizes) log.watch(transfer.acquire(fit(units)));
          }
          // Permit ids follow grant order: these were granted before any background request.
          const grantedBeforeBackground = registry.snapshot().counters.grants;
          let backgroundQueued = 0;
          for (const sizes of backgroundSizes) {
            const transfer = open("background");
            for (const units of sizes) log.watch(transfer.acquire(fit(units)));
            backgroundQueued += sizes.length;
          }
          await tick();
          for (const index of releaseOrder) {
            if (log.held.length === 0) break;
            log.release(index);
            await tick();
          }
          // Replay the grants: count foreground grants in a row while background requests wait.
          let backgroundWaiting = backgroundQueued;
          let run = 0;
          for (const permit of log.grants) {
            if (permit.id <= grantedBeforeBackground) continue;
            if (permit.priority === "background") {
              backgroundWaiting--;
              run = 0;
            } else if (backgroundWaiting > 0) {
              run++;
              expect(run).toBeLessThanOrEqual(interval);
            }
          }
          const closing = registry.close();
          for (const permit of log.held) permit.release();
          await closing;
        },
      ),
      { numRuns: 80 },
    );
  });

  it("lets background use the whole budget when no foreground request waits", async () => {
    const registry = new MediaSchedulerRegistry({ upload: { maxBytesInFlight: 4 * UNIT } });
    const background = registry.open({
      dc: 1,
      direction: "upload",
      sizeBytes: 1,
      priority: "background",
    });
    const permits = await Promise.all([1, 2, 3, 4].map(() => background.acquire(UNIT)));
    expect(background.schedulerSnapshot().activeBytes).toBe(4 * UNIT);
    for (const permit of permits) permit.release();
  });
});

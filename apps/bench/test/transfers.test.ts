import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { CHUNK_BYTES, chunksOf } from "../src/transfers/files.js";
import { TimedLink } from "../src/transfers/link.js";
import { runTransfers, type TransfersConfig } from "../src/transfers/run.js";

const KiB = 1024;
const MiB = 1024 * KiB;

describe("chunksOf", () => {
  it("covers a file with 512 KiB Range chunks, the last one shorter", () => {
    const chunks = chunksOf(CHUNK_BYTES * 2 + 100);
    expect(chunks).toEqual([
      { start: 0, length: CHUNK_BYTES },
      { start: CHUNK_BYTES, length: CHUNK_BYTES },
      { start: CHUNK_BYTES * 2, length: 100 },
    ]);
    expect(chunksOf(0)).toEqual([]);
  });
});

describe("TimedLink", () => {
  it("waits a round trip, then shares the bandwidth evenly between responses in flight", async () => {
    const clock = new ManualClock();
    // 1 KiB per ms.
    const link = new TimedLink({ clock, bytesPerSecond: 1000 * KiB, roundTripMs: 10 });
    const done: [number, number][] = [];
    const fetch = (bytes: number, tag: number) =>
      link.fetch(bytes, tag).then(() => done.push([tag, clock.now()]));
    const all = Promise.all([fetch(100 * KiB, 0), fetch(200 * KiB, 1)]);
    await clock.runAll();
    await all;
    // Both flow from 10 ms at 0.5 KiB/ms until the first finishes at 210 ms; the second then
    // has 100 KiB left at the full rate: 310 ms.
    expect(done).toEqual([
      [0, 210],
      [1, 310],
    ]);
    expect(link.deliveredTo(0)).toBeCloseTo(100 * KiB, 3);
    expect(link.deliveredBytes).toBeCloseTo(300 * KiB, 3);
    expect(link.busyMs).toBeCloseTo(300, 6);
  });

  it("refuses a bandwidth that is not positive", () => {
    expect(
      () => new TimedLink({ clock: new ManualClock(), bytesPerSecond: 0, roundTripMs: 1 }),
    ).toThrow("Expected `bytesPerSecond` to be > 0, got 0");
  });
});

describe("runTransfers (tiny)", () => {
  it("downloads through every gate, keeps the budgets and measures fairness", async () => {
    const config: TransfersConfig = {
      link: { bytesPerSecond: 64 * MiB, roundTripMs: 5, roundTripJitter: 0.5 },
      mixed: {
        large: { count: 1, sizeBytes: 21 * MiB },
        small: { count: 6, minBytes: 16 * KiB, maxBytes: 64 * KiB, firstStartMs: 5, intervalMs: 5 },
      },
      equal: { count: 3, sizeBytes: MiB, budgetBytes: 512 * KiB },
      roundTripsMs: [5, 30],
      grants: { transfers: 50, grantsPerTransfer: 3, repeats: 1 },
      seed: 3,
    };
    const result = await runTransfers(config);
    const figures = result.figures as {
      summary: Record<string, number>;
      mixed: { id: string; peakBytesInFlight: number; throughputVsLink: number }[];
      fairness: { jainFromFirstGrant: number }[];
      grants: { overheadPerGrantUs: number }[];
    };
    expect(Object.keys(figures.summary)).toEqual([
      "jainFromFirstGrant",
      "jainBacklogged",
      "smallP99VsPqueueFifo",
      "smallP99VsPqueueFifoDefaults",
      "largeMeanVsNoLimit",
      "grantCostVsPqueue",
      "throughputVsLink",
    ]);
    expect(figures.mixed).toHaveLength(7);
    for (const run of figures.mixed) {
      expect(run.throughputVsLink).toBeGreaterThan(0);
      expect(run.throughputVsLink).toBeLessThanOrEqual(1 + 1e-9);
      if (run.id !== "noLimit") expect(run.peakBytesInFlight).toBeLessThanOrEqual(16 * MiB);
    }
    // Large downloads hold at most 4 MiB by default.
    expect(
      figures.mixed.find((run) => run.id === "defaults")?.peakBytesInFlight,
    ).toBeLessThanOrEqual(4 * MiB + 6 * 64 * KiB);
    for (const run of figures.fairness) {
      expect(run.jainFromFirstGrant).toBeGreaterThan(0);
      expect(run.jainFromFirstGrant).toBeLessThanOrEqual(1);
    }
    expect(figures.grants).toHaveLength(3);
    expect(result.tables.map((table) => table.rows.length)).toEqual([7, 4, 3, 2, 7]);
  }, 30_000);
});

import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { jsonReplacer } from "../src/report.js";
import type { TransfersConfig } from "../src/transfers/config.js";
import { ConnectionPool } from "../src/transfers/connections.js";
import { CHUNK_BYTES, chunksOf, equalPlans } from "../src/transfers/files.js";
import { linkFloor } from "../src/transfers/floor.js";
import { noLimitGate, pQueueGate } from "../src/transfers/gates.js";
import { type LinkModel, TimedLink } from "../src/transfers/link.js";
import { runTransfers } from "../src/transfers/run.js";
import { simulate } from "../src/transfers/simulate.js";

const KiB = 1024;
const MiB = 1024 * KiB;

const connection = {
  initialWindowBytes: 10 * KiB,
  handshakeRoundTrips: 2,
  idleRestartMs: 200,
  keepAliveMs: 4_000,
};

/** 1 KiB per ms, per connection too, 10 ms round trips, no jitter. */
const model: LinkModel = {
  bytesPerSecond: 1000 * KiB,
  connectionBytesPerSecond: 1000 * KiB,
  roundTripMs: 10,
  roundTripJitter: 0,
  connection,
};

/** Runs `fetches` on a fresh link and records when each finished. */
async function timeline(
  options: Partial<LinkModel>,
  fetches: readonly { readonly bytes: number; readonly atMs?: number }[],
): Promise<{ doneAt: number[]; link: TimedLink }> {
  const clock = new ManualClock();
  const link = new TimedLink({ clock, ...model, ...options, seed: 1 });
  const doneAt: number[] = [];
  const all = Promise.all(
    fetches.map(async ({ bytes, atMs = 0 }, index) => {
      if (atMs > 0) await clock.sleep(atMs);
      await link.fetch(bytes, index);
      doneAt[index] = clock.now();
    }),
  );
  await clock.runAll();
  await all;
  return { doneAt, link };
}

describe("chunksOf", () => {
  it("covers a file with 512 KiB Range chunks, the last one shorter", () => {
    expect(chunksOf(CHUNK_BYTES * 2 + 100)).toEqual([
      { start: 0, length: CHUNK_BYTES },
      { start: CHUNK_BYTES, length: CHUNK_BYTES },
      { start: CHUNK_BYTES * 2, length: 100 },
    ]);
    expect(chunksOf(0)).toEqual([]);
  });
});

describe("ConnectionPool", () => {
  it("reuses the first idle connection in creation order and opens one when all are busy", () => {
    const pool = new ConnectionPool(connection);
    const first = pool.take(0);
    const second = pool.take(0);
    expect([first.needsHandshake, second.needsHandshake, pool.size]).toEqual([true, true, 2]);
    pool.release(second.connection, 5);
    pool.release(first.connection, 6);
    const again = pool.take(7);
    expect(again.connection).toBe(first.connection);
    expect(again.needsHandshake).toBe(false);
    expect(pool.openedCount).toBe(2);
  });

  it("reopens a connection idle past the keep-alive timeout, from the initial window", () => {
    const pool = new ConnectionPool(connection);
    const { connection: open } = pool.take(0);
    open.windowBytes = 1 * MiB;
    pool.release(open, 10);
    const later = pool.take(10 + connection.keepAliveMs + 1);
    expect(later.needsHandshake).toBe(true);
    expect(later.connection.windowBytes).toBe(connection.initialWindowBytes);
  });

  it("restarts the window after an idle spell longer than the retransmission timeout", () => {
    const pool = new ConnectionPool(connection);
    const { connection: open } = pool.take(0);
    open.windowBytes = 1 * MiB;
    pool.release(open, 0);
    pool.startResponse(open, 150, 30);
    expect(open.windowBytes).toBe(1 * MiB);
    pool.startResponse(open, 250, 30);
    expect(open.windowBytes).toBe(connection.initialWindowBytes);
    // The timeout is at least two round trips.
    open.windowBytes = 1 * MiB;
    pool.startResponse(open, 290, 150);
    expect(open.windowBytes).toBe(1 * MiB);
  });
});

describe("TimedLink", () => {
  it("pays the handshake and a round trip, then sends in round trips of a growing window", async () => {
    // Handshake 20 ms + round trip 10 ms: first byte at 30. Round one sends the 10 KiB window
    // (30–40 ms), round two the doubled 20 KiB (40–60 ms); the window is 40 KiB after it. The
    // same request again at 65 ms on the warm connection: first byte at 75, its 30 KiB in one
    // round at 1 KiB/ms: 105 ms.
    const { doneAt, link } = await timeline({}, [
      { bytes: 30 * KiB },
      { bytes: 30 * KiB, atMs: 65 },
    ]);
    expect(doneAt[0]).toBeCloseTo(60, 6);
    expect(doneAt[1]).toBeCloseTo(105, 6);
    expect(link.counters).toMatchObject({
      requests: 2,
      handshakes: 1,
      connections: 1,
      firstByteCount: 1,
      firstByteMsSum: 10,
    });
    expect(link.deliveredBytes).toBeCloseTo(60 * KiB, 3);
  });

  it("waits out the round trip when the window runs out before it ends", async () => {
    // A 20 KiB window at 4 KiB/ms is sent in 5 ms; the next window can only start when the
    // round trip ends at 10 ms.
    const { doneAt } = await timeline(
      {
        bytesPerSecond: 4000 * KiB,
        connectionBytesPerSecond: 4000 * KiB,
        roundTripMs: 10,
        connection: { ...connection, initialWindowBytes: 20 * KiB, handshakeRoundTrips: 0 },
      },
      [{ bytes: 40 * KiB }],
    );
    // First byte at 10; 20 KiB by 15; wait to 20; the 40 KiB window sends the rest by 25.
    expect(doneAt[0]).toBeCloseTo(25, 6);
  });

  it("caps each connection and shares the rest of the link evenly", async () => {
    const wide = { ...connection, initialWindowBytes: 1 * MiB, handshakeRoundTrips: 0 };
    // Link 4 KiB/ms, each connection at most 1 KiB/ms: two responses each move at 1, not 2.
    const capped = await timeline({ bytesPerSecond: 4000 * KiB, connection: wide }, [
      { bytes: 100 * KiB },
      { bytes: 100 * KiB },
    ]);
    expect(capped.doneAt).toEqual([expect.closeTo(110, 6), expect.closeTo(110, 6)]);
    // Link 1 KiB/ms: both at 0.5 until the first ends at 210; the second's rest at 1: 310.
    const shared = await timeline({ connectionBytesPerSecond: 4000 * KiB, connection: wide }, [
      { bytes: 100 * KiB },
      { bytes: 200 * KiB },
    ]);
    expect(shared.doneAt).toEqual([expect.closeTo(210, 6), expect.closeTo(310, 6)]);
    expect(shared.link.deliveredTo(0)).toBeCloseTo(100 * KiB, 3);
  });

  it("refuses a bandwidth or window that is not positive", () => {
    const clock = new ManualClock();
    expect(() => new TimedLink({ ...model, clock, seed: 1, bytesPerSecond: 0 })).toThrow(
      "Expected `bytesPerSecond` to be > 0, got 0",
    );
    expect(
      () => new TimedLink({ ...model, clock, seed: 1, connectionBytesPerSecond: Number.NaN }),
    ).toThrow("Expected `connectionBytesPerSecond` to be > 0, got NaN");
    expect(
      () =>
        new TimedLink({
          ...model,
          clock,
          seed: 1,
          connection: { ...connection, initialWindowBytes: 0 },
        }),
    ).toThrow("Expected `initialWindowBytes` to be > 0, got 0");
  });
});

describe("linkFloor", () => {
  it("times a response alone, on a new connection and again on the warm one", async () => {
    const floor = await linkFloor(model, 30 * KiB);
    expect(floor).toEqual({
      bytes: 30 * KiB,
      coldMs: expect.closeTo(60, 6),
      warmMs: expect.closeTo(40, 6),
    });
  });
});

describe("simulate", () => {
  it("keeps at most the request window of each file asked for at once", async () => {
    const files = equalPlans(2, 8 * CHUNK_BYTES, 20 * MiB);
    for (const requestWindow of [1, 3]) {
      const run = await simulate(() => noLimitGate(), files, model, { requestWindow, seed: 1 });
      expect(run.peakBytesInFlight).toBe(2 * requestWindow * CHUNK_BYTES);
      expect(run.link.requests).toBe(16);
    }
    await expect(
      simulate(() => noLimitGate(), files, model, { requestWindow: 0, seed: 1 }),
    ).rejects.toThrow("Expected `requestWindow` to be an integer >= 1, got 0");
  });

  it("lets p-queue's slots bound the requests in flight across files", async () => {
    const files = equalPlans(4, 4 * CHUNK_BYTES, 20 * MiB);
    const run = await simulate(() => pQueueGate(2, false), files, model, {
      requestWindow: 4,
      seed: 1,
    });
    expect(run.peakBytesInFlight).toBe(2 * CHUNK_BYTES);
    expect(run.link.connections).toBe(2);
  });
});

describe("runTransfers (tiny)", () => {
  it("runs every scenario in rounds and summarises medians with their range", async () => {
    const config: TransfersConfig = {
      link: { ...model, bytesPerSecond: 64 * MiB, connectionBytesPerSecond: 16 * MiB },
      requestWindow: 2,
      mixed: {
        large: { count: 1, sizeBytes: 21 * MiB },
        small: { count: 6, minBytes: 16 * KiB, maxBytes: 64 * KiB, firstStartMs: 5, intervalMs: 5 },
      },
      loadedLarge: { count: 2, sizeBytes: 21 * MiB },
      equal: { count: 3, sizeBytes: MiB },
      roundTripsMs: [5],
      grants: { transfers: 20, grantsPerTransfer: 3 },
      rounds: 2,
      seed: 3,
    };
    const result = await runTransfers(config);
    // As results/latest.json keeps them.
    const figures = JSON.parse(JSON.stringify(result.figures, jsonReplacer)) as {
      summary: Record<string, number>;
      mixed: {
        rounds: { seed: number; order: string[] }[];
        results: Record<string, { peakBytesInFlight: number; throughputVsLink: number }[]>;
      };
      fairness: { results: Record<string, { jain: number }[]> };
    };
    const names = [
      "linkRttMs",
      "smallP99VsPqueueSmallFirst",
      "smallP99VsLinkFloor",
      "smallP99VsPqueueFifo",
      "smallP99VsPqueueSmallFirstLoaded",
      "jainEqualFilesDefaults",
      "throughputVsLink",
      "throughputVsNoLimit",
      "throughputVsLinkLoaded",
      "largeMeanVsNoLimit",
      "grantCostVsPqueue",
    ];
    expect(Object.keys(figures.summary)).toEqual([
      "rounds",
      ...names.flatMap((name) => [name, `${name}Min`, `${name}Max`]),
    ]);
    expect(figures.summary.rounds).toBe(2);
    for (const name of names) {
      const { [name]: value, [`${name}Min`]: min, [`${name}Max`]: max } = figures.summary;
      expect(min).toBeLessThanOrEqual(value as number);
      expect(value).toBeLessThanOrEqual(max as number);
    }
    // The round trip as run is the link's: 10 ms, measured on the simulated clock.
    expect(figures.summary.linkRttMs).toBeCloseTo(10, 6);
    expect(figures.mixed.rounds.map((round) => round.seed)).toEqual([3, 4]);
    for (const [id, runs] of Object.entries(figures.mixed.results)) {
      expect(runs).toHaveLength(2);
      for (const run of runs) {
        expect(run.throughputVsLink).toBeGreaterThan(0);
        expect(run.throughputVsLink).toBeLessThanOrEqual(1 + 1e-9);
        if (id !== "noLimit") expect(run.peakBytesInFlight).toBeLessThanOrEqual(16 * MiB);
      }
    }
    for (const runs of Object.values(figures.fairness.results)) {
      for (const run of runs) expect(run.jain).toBeGreaterThan(0);
    }
    expect(result.tables.map((table) => table.rows.length)).toEqual([6, 6, 2, 4, 3, 12]);
  }, 30_000);
});

import type { Update } from "@grammyjs/types";
import { describe, expect, it } from "vitest";
import { type HotBurstConfig, runHotBurst } from "../src/dispatch/hot-burst.js";
import { ReplayRecorder, UpdateFeed } from "../src/dispatch/replay.js";
import { SWEEP_CONTENDER_IDS } from "../src/dispatch/round-trip-sweep.js";
import { type DispatchConfig, runDispatch } from "../src/dispatch/run.js";
import {
  makeUpdateStream,
  principalConstraint,
  type StreamOptions,
} from "../src/dispatch/workload.js";
import type { Rounds } from "../src/rounds.js";

const tiny: StreamOptions = {
  count: 400,
  principals: 30,
  skew: 0.5,
  groupShare: 0.3,
  groups: 4,
  arrivalsPerSecond: Number.POSITIVE_INFINITY,
  ioMs: [0, 0],
  seed: 5,
};

describe("the update stream", () => {
  it("is the same for the same seed, with ids in order and private and group principals", () => {
    const a = makeUpdateStream(tiny);
    const b = makeUpdateStream(tiny);
    expect(a.updates).toEqual(b.updates);
    expect(a.updates.map((update) => update.update_id)).toEqual(
      Array.from({ length: 400 }, (_, index) => index + 1),
    );
    const types = new Set(a.updates.map((update) => update.message?.chat.type));
    expect(types).toEqual(new Set(["private", "supergroup"]));
  });

  it("gives grammY's constraint the same principals as the stream's own", () => {
    const stream = makeUpdateStream(tiny);
    const keyOf = new Map<number, string | undefined>();
    stream.updates.forEach((update, index) => {
      const principal = stream.principalOf[index] as number;
      const key = principalConstraint(update);
      if (keyOf.has(principal)) expect(keyOf.get(principal)).toBe(key);
      keyOf.set(principal, key);
    });
    expect(new Set(keyOf.values()).size).toBe(keyOf.size);
  });
});

describe("the replay", () => {
  it("hands out arrived updates up to the limit, then nothing once exhausted", async () => {
    const stream = makeUpdateStream({ ...tiny, count: 5 });
    const feed = new UpdateFeed(stream, performance.now());
    expect((await feed.supply(3)).map((update) => update.update_id)).toEqual([1, 2, 3]);
    expect((await feed.supply(100)).map((update) => update.update_id)).toEqual([4, 5]);
    expect(feed.isExhausted).toBe(true);
    expect(await feed.supply(100)).toEqual([]);
  });

  it("counts out-of-order, overlapping and repeated starts per principal", async () => {
    const stream = makeUpdateStream({ ...tiny, count: 200, principals: 2, ioMs: [1, 1] });
    const recorder = new ReplayRecorder(stream, performance.now());
    const a = stream.updates.filter((_, index) => stream.principalOf[index] === 0);
    // Later update first, then the earlier one while it still runs, then a repeat.
    const running = [recorder.process(a[1] as Update), recorder.process(a[0] as Update)];
    await Promise.all(running);
    await recorder.process(a[0] as Update);
    const trace = recorder.trace();
    expect(trace.outOfOrderStarts).toBe(1);
    expect(trace.overlappingStarts).toBe(1);
    expect(trace.duplicateStarts).toBe(1);
  });
});

const tinyHotBurst: HotBurstConfig = {
  burstSeconds: 0.5,
  others: 10,
  otherPerSecond: 2,
  hotFactor: 10,
  ioMs: [8, 12],
  latencyMs: 2,
  drainMs: 10_000,
  seed: 14,
};

describe("runDispatch (tiny)", () => {
  it("replays every update through each contender in order and renders its tables", async () => {
    const config: DispatchConfig = {
      concurrency: 8,
      steady: { ...tiny, arrivalsPerSecond: 4_000, ioMs: [1, 2], seed: 1 },
      backlog: { ...tiny, ioMs: [1, 2], seed: 2 },
      overhead: { ...tiny, count: 1_000, seed: 3 },
      overheadRepeats: 1,
      endToEnd: {
        latencyMs: 2,
        hot: {
          ...tiny,
          count: 300,
          groupShare: 0,
          arrivalsPerSecond: 1_500,
          ioMs: [1, 2],
          seed: 12,
          hotShare: 0.17,
        },
        crash: { ...tiny, count: 200, groupShare: 0, ioMs: [1, 2], seed: 13 },
        crashKillAfter: 50,
        floodRateRounds: 2,
        floodSizes: [2_000, 5_000],
        floodFileSize: 2_000,
        deadlineMs: 10_000,
      },
      hotBurst: { ...tinyHotBurst, burstSeconds: 1.5, others: 20 },
      roundTripSweep: {
        roundTripsMs: [2, 10],
        rounds: 2,
        seed: 31,
        backlog: { ...tiny, groupShare: 0, ioMs: [1, 2] },
        backlogCounts: [600, 600],
        warmUpMs: 100,
        windowMs: 200,
        probes: 2,
      },
    };
    const result = await runDispatch(config, "full");
    const figures = result.figures as {
      steady: {
        finished: number;
        updates: number;
        outOfOrderStarts: number;
        overlappingStarts: number;
        duplicateStarts: number;
        lost: number;
        updatesPerSecond: number;
      }[];
      backlog: typeof figures.steady;
      overhead: { sync: { runs: typeof figures.steady }; async: { runs: typeof figures.steady } };
    };
    const overhead = [...figures.overhead.sync.runs, ...figures.overhead.async.runs];
    for (const run of [...figures.steady, ...figures.backlog, ...overhead]) {
      expect(run.finished).toBe(run.updates);
      expect(run.outOfOrderStarts + run.overlappingStarts + run.duplicateStarts).toBe(0);
      expect(run.lost).toBe(0);
      expect(run.updatesPerSecond).toBeGreaterThan(0);
    }
    expect(result.tables.map((table) => table.rows.length)).toEqual([
      3, 3, 4, 4, 3, 3, 3, 4, 2, 3, 7,
    ]);
    const area = result.figures as {
      summary: Record<string, number>;
      hotPrincipal: { late: number; rejected: number }[];
      crash: { kind: string; lost: number; finishedBeforeKill: number }[];
      flood: { finished: number; updates: number }[][];
      hotBurst: { othersLost: number }[];
      roundTripSweep: {
        roundTripMs: number;
        rounds: Rounds<{
          updatesPerSecond: number;
          outOfOrderStarts: number;
          overlappingStarts: number;
          duplicateStarts: number;
        }>;
      }[];
    };
    expect(Object.keys(area.summary).sort()).toEqual(
      [
        "overheadVsRunner",
        "overheadAsyncVsRunner",
        "backlogVsRunner",
        ...[
          "pollingVsRunner",
          "pollingVsSlotCeiling",
          "pollingCeilingVsRunner",
          "fetchesPerUpdate",
        ].flatMap((name) => [name, `${name}Min`, `${name}Max`]),
        "hotPrincipalOthersP99Ms",
        "orderViolations",
        "lostAfterCrash",
        "floodRounds",
        "floodVsRunner",
        "floodVsRunnerMin",
        "floodVsRunnerMax",
        "floodFileVsRunner",
        "hotBurstSeconds",
        "hotBurstOthersP99Ms",
        "hotBurstRejected",
        "hotBurstHotLost",
        "hotBurstHeapGrowthMB",
        "roundTripSweepRounds",
        ...[
          "measuredGetUpdatesMsAt10ms",
          "pollingVsRunnerAt10ms",
          "pollingDefaultsVsRunnerDefaultsAt10ms",
          "pollingVsNominalCeilingAt10ms",
          "pollingVsSlotCeilingAt10ms",
        ].flatMap((name) => [name, `${name}Min`, `${name}Max`]),
      ].sort(),
    );
    // Read from the sweep at +2 ms: every update fetched once, by every round's intake.
    expect(area.summary.fetchesPerUpdateMax).toBe(1);
    // Nobody drains faster than the slot ceiling, so the ratio to the runner stays below it.
    expect(area.summary.pollingVsSlotCeiling).toBeGreaterThan(0);
    expect(area.summary.pollingVsSlotCeiling).toBeLessThanOrEqual(1);
    expect(area.summary.pollingVsRunner).toBeLessThanOrEqual(
      area.summary.pollingCeilingVsRunner as number,
    );
    expect(area.summary.orderViolations).toBe(0);
    expect(area.hotPrincipal[0]?.rejected).toBe(0);
    expect(area.hotPrincipal[0]?.late).toBe(0);
    // The intake with a file journal loses nothing to SIGKILL; the runner may.
    expect(area.crash.map((run) => run.kind)).toEqual(["intake", "runner", "runner"]);
    expect(area.crash[0]?.finishedBeforeKill).toBeGreaterThanOrEqual(50);
    expect(area.summary.lostAfterCrash).toBe(0);
    for (const run of area.flood.flat()) expect(run.finished).toBe(run.updates);
    expect(area.summary.floodVsRunner).toBeGreaterThan(0);
    expect(area.summary.floodFileVsRunner).toBeGreaterThan(0);
    // The hot burst: nothing refused or lost, everything in order, over the whole burst.
    expect(area.summary.hotBurstSeconds).toBeGreaterThanOrEqual(1.4);
    expect(area.summary.hotBurstRejected).toBe(0);
    expect(area.summary.hotBurstHotLost).toBe(0);
    expect(area.hotBurst[0]?.othersLost).toBe(0);
    // The sweep measured its round trip: at +10 ms a getUpdates takes at least 10 ms.
    expect(area.summary.roundTripSweepRounds).toBe(2);
    expect(area.summary.measuredGetUpdatesMsAt10ms).toBeGreaterThanOrEqual(10);
    expect(area.summary.pollingVsRunnerAt10ms).toBeGreaterThan(0);
    expect(area.summary.pollingVsNominalCeilingAt10ms).toBeGreaterThan(0);
    // Every way of running the bot drained the backlog, in order, at every round trip.
    expect(area.roundTripSweep.map((result) => result.roundTripMs)).toEqual([2, 10]);
    for (const { rounds } of area.roundTripSweep) {
      for (const id of SWEEP_CONTENDER_IDS) {
        for (const run of rounds.of(id)) {
          expect(run.updatesPerSecond).toBeGreaterThan(0);
          expect(run.outOfOrderStarts + run.overlappingStarts + run.duplicateStarts).toBe(0);
        }
      }
    }
  }, 180_000);

  it("runs the hot burst through its headline alone, unless the scope is full", async () => {
    const burst = await runHotBurst(tinyHotBurst, 8, "headline");
    expect(burst.runs.map((run) => run.contender)).toEqual([burst.headline.contender]);
    expect(burst.headline.contender).toMatch(/FileUpdateJournal/);
    expect(burst.table.rows).toHaveLength(1);
    expect(burst.table.notes?.at(-1)).toMatch(/pnpm bench:full/);
  }, 60_000);
});

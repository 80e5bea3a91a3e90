// The dispatch comparison: the same update streams through UpdateDispatcher and grammY runner's
// sequentialize — steady arrivals, a backlog (overload) and raw overhead.

import { type HeapReading, HeapSampler } from "../heap.js";
import type { AreaResult } from "../report.js";
import { ScenarioClock } from "../scenario-clock.js";
import type { BenchScope } from "../scope.js";
import { formatCount, formatFixed, formatRatio, ratio, type Summary, summarize } from "../stats.js";
import type { Table } from "../table.js";
import {
  type DispatchContender,
  directCalls,
  grammyRunner,
  POLL_LIMIT,
  telepaceDispatcher,
} from "./contenders.js";
import { type EndToEndConfig, endToEndConfig, runEndToEnd } from "./end-to-end.js";
import {
  type HotBurstConfig,
  hotBurstConfig,
  hotBurstViolations,
  runHotBurst,
} from "./hot-burst.js";
import { pollingFigures } from "./polling-figures.js";
import { type RecorderOptions, ReplayRecorder, UpdateFeed } from "./replay.js";
import {
  type RoundTripResult,
  type RoundTripSweepConfig,
  roundTripSweepConfig,
  runRoundTripSweep,
} from "./round-trip-sweep.js";
import { makeUpdateStream, type StreamOptions, type UpdateStream } from "./workload.js";

/** Sizes of the dispatch comparison. */
export interface DispatchConfig {
  /** Concurrency given to both UpdateDispatcher and the runner's sink in the equal-settings rows. */
  readonly concurrency: number;
  readonly steady: StreamOptions;
  readonly backlog: StreamOptions;
  readonly overhead: StreamOptions;
  /** Repetitions of the overhead scenario per processor (the median is kept). */
  readonly overheadRepeats: number;
  /** The end-to-end scenarios against the simulator and the flood. */
  readonly endToEnd: EndToEndConfig;
  /** One principal sending ten times faster than it is served, for half a minute. */
  readonly hotBurst: HotBurstConfig;
  /** Every way to run a grammY bot, at several round trips to the Bot API. */
  readonly roundTripSweep: RoundTripSweepConfig;
}

const PRINCIPALS = { principals: 2_000, skew: 0.5, groupShare: 0.3, groups: 50 } as const;

/** The full-size configuration `pnpm bench` uses. */
export const dispatchConfig: DispatchConfig = {
  concurrency: 64,
  steady: {
    ...PRINCIPALS,
    count: 10_000,
    arrivalsPerSecond: 4_000,
    ioMs: [5, 15],
    seed: 1,
  },
  backlog: {
    ...PRINCIPALS,
    count: 20_000,
    arrivalsPerSecond: Number.POSITIVE_INFINITY,
    ioMs: [5, 15],
    seed: 2,
  },
  overhead: {
    ...PRINCIPALS,
    count: 50_000,
    arrivalsPerSecond: Number.POSITIVE_INFINITY,
    ioMs: [0, 0],
    seed: 3,
  },
  overheadRepeats: 7,
  endToEnd: endToEndConfig,
  hotBurst: hotBurstConfig,
  roundTripSweep: roundTripSweepConfig,
};

/** Everything measured for one contender in one scenario. */
export interface DispatchRun {
  readonly contender: string;
  readonly settings: Readonly<Record<string, number | string>>;
  readonly updates: number;
  readonly finished: number;
  readonly makespanMs: number;
  readonly updatesPerSecond: number;
  /** Processor start minus arrival, ms. */
  readonly queueingMs: Summary;
  readonly peakHeldUpdates: number;
  readonly heap: HeapReading;
  /** CPU time of the process (user + system) during the run, ms. */
  readonly cpuMs: number;
  readonly outOfOrderStarts: number;
  readonly overlappingStarts: number;
  readonly duplicateStarts: number;
  readonly lost: number;
  readonly errors: number;
}

/** The pause before a measured run, so background GC work of what came before is done, ms. */
const SETTLE_MS = 50;

async function replay(
  stream: UpdateStream,
  contender: DispatchContender,
  options: RecorderOptions = {},
  isHeapCollectedFirst = true,
): Promise<DispatchRun> {
  const heap = new HeapSampler(5, isHeapCollectedFirst);
  // Background GC work (sweeping after a collection) counts in process.cpuUsage(): let it
  // finish, so it is not billed to the contender.
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  let peakHeld = 0;
  const probe = setInterval(() => {
    peakHeld = Math.max(peakHeld, contender.held());
  }, 5);
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const feed = new UpdateFeed(stream, startedAt);
  const recorder = new ReplayRecorder(stream, startedAt, options);
  const report = await contender.run(feed, recorder, stream.updates.length);
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(probe);
  const heapReading = heap.stop();
  const trace = recorder.trace();
  const queueing = Array.from(trace.queueingMs).filter((value) => !Number.isNaN(value));
  return {
    contender: contender.name,
    settings: contender.settings,
    updates: stream.updates.length,
    finished: trace.finished,
    makespanMs: trace.makespanMs,
    updatesPerSecond: (trace.finished * 1000) / trace.makespanMs,
    queueingMs: summarize(queueing),
    peakHeldUpdates: peakHeld,
    heap: heapReading,
    cpuMs: (cpu.user + cpu.system) / 1000,
    outOfOrderStarts: trace.outOfOrderStarts,
    overlappingStarts: trace.overlappingStarts,
    duplicateStarts: trace.duplicateStarts,
    lost: report.lost,
    errors: report.errors,
  };
}

function contendersFor(config: DispatchConfig): DispatchContender[] {
  return [
    telepaceDispatcher({ maxConcurrency: config.concurrency }),
    grammyRunner({ concurrency: config.concurrency }),
    grammyRunner({ concurrency: 500, label: ", its default" }),
  ];
}

/** Lets JIT and allocation settle for each contender before anything is measured. */
async function warmUp(config: DispatchConfig): Promise<void> {
  const stream = makeUpdateStream({ ...config.overhead, count: 3_000, seed: 99 });
  for (const contender of [directCalls(), ...contendersFor(config)]) {
    await replay(stream, contender);
  }
}

function violations(run: DispatchRun): number {
  return run.outOfOrderStarts + run.overlappingStarts + run.duplicateStarts;
}

function mb(bytes: number): string {
  return formatFixed(bytes / 1_048_576, 1);
}

function loadTable(title: string, runs: readonly DispatchRun[], notes: string[]): Table {
  const base = runs[0] as DispatchRun;
  return {
    title,
    columns: [
      { header: "contender", align: "left" },
      { header: "updates/s" },
      { header: "queue p50" },
      { header: "queue p99" },
      { header: "peak heap" },
      { header: "peak held" },
      { header: "order violations" },
      { header: "lost" },
    ],
    rows: runs.map((run) => [
      run.contender,
      formatRatio(ratio(run.updatesPerSecond, base.updatesPerSecond)),
      formatRatio(ratio(run.queueingMs.p50, base.queueingMs.p50)),
      formatRatio(ratio(run.queueingMs.p99, base.queueingMs.p99)),
      formatRatio(ratio(run.heap.peakAboveBaselineBytes, base.heap.peakAboveBaselineBytes)),
      formatCount(run.peakHeldUpdates),
      formatCount(violations(run)),
      formatCount(run.lost + run.updates - run.finished),
    ]),
    notes: [
      `ratios are each row ÷ the telepace row; telepace measured ${formatCount(base.updatesPerSecond)} updates/s, queueing p50 ${formatFixed(base.queueingMs.p50, 1)} ms / p99 ${formatFixed(base.queueingMs.p99, 1)} ms, peak heap +${mb(base.heap.peakAboveBaselineBytes)} MB`,
      "queueing = processor start − arrival; held = accepted and not finished; violations = out-of-order, overlapping or repeated starts per principal",
      ...notes,
    ],
  };
}

function describe(stream: StreamOptions): string {
  const arrivals = Number.isFinite(stream.arrivalsPerSecond)
    ? `arriving at ${formatCount(stream.arrivalsPerSecond)}/s`
    : "all waiting at once";
  return `${formatCount(stream.count)} updates over ${formatCount(stream.principals)} principals (Zipf ${stream.skew}), ${arrivals}, I/O ${stream.ioMs[0]}–${stream.ioMs[1]} ms`;
}

/** Runs the dispatch comparison; `scope` `"full"` adds the hot burst's comparison rows. */
export async function runDispatch(
  config: DispatchConfig = dispatchConfig,
  scope: BenchScope = "headline",
): Promise<AreaResult> {
  const { latencyMs } = config.endToEnd;
  if (!config.roundTripSweep.roundTripsMs.includes(latencyMs)) {
    throw new RangeError(
      `Expected \`roundTripSweep.roundTripsMs\` to include \`endToEnd.latencyMs\` (${latencyMs}): the polling figures are read from the sweep there, got ${config.roundTripSweep.roundTripsMs.join(", ")}`,
    );
  }
  const startedAt = performance.now();
  const clock = new ScenarioClock();
  await clock.time("warmUp", () => warmUp(config));

  const steady = await clock.time("steady", async () => {
    const stream = makeUpdateStream(config.steady);
    const runs: DispatchRun[] = [];
    for (const contender of contendersFor(config)) runs.push(await replay(stream, contender));
    return runs;
  });
  const backlog = await clock.time("backlog", async () => {
    const stream = makeUpdateStream(config.backlog);
    const runs: DispatchRun[] = [];
    for (const contender of contendersFor(config)) runs.push(await replay(stream, contender));
    return runs;
  });

  const overheadStream = makeUpdateStream(config.overhead);
  const overheadSync = await clock.time("overhead", () =>
    measureOverhead(config, overheadStream, false),
  );
  const overheadAsync = await clock.time("overhead", () =>
    measureOverhead(config, overheadStream, true),
  );
  const endToEnd = await runEndToEnd(config.endToEnd, config.concurrency, clock);
  const hotBurst = await clock.time("hotBurst", () =>
    runHotBurst(config.hotBurst, config.concurrency, scope),
  );
  const sweep = await clock.time("roundTripSweep", () =>
    runRoundTripSweep(config.roundTripSweep, config.concurrency),
  );
  const polling = pollingFigures(
    config.roundTripSweep,
    sweep.byRoundTrip.find((result) => result.roundTripMs === latencyMs) as RoundTripResult,
  );

  const backlogVsRunner = ratio(
    (backlog[0] as DispatchRun).updatesPerSecond,
    (backlog[1] as DispatchRun).updatesPerSecond,
  );
  const tables: Table[] = [
    loadTable(`Dispatch, steady load: ${describe(config.steady)}`, steady, [
      `equal settings: concurrency ${config.concurrency} on both sides; the third row is the runner's default sink`,
    ]),
    loadTable(`Dispatch, backlog (overload): ${describe(config.backlog)}`, backlog, [
      "updates/s here is the drain rate of the whole backlog; both pollers take at most 100 updates per poll",
    ]),
    overheadTable(config, overheadSync, "a synchronous processor (returns undefined)"),
    overheadTable(config, overheadAsync, "an `async () => {}` processor"),
    polling.table,
    ...endToEnd.tables,
    hotBurst.table,
    sweep.table,
  ];
  // telepace's rows only (each table shows every contender's own count).
  const telepaceViolations = [steady, backlog, overheadSync.runs, overheadAsync.runs]
    .map((runs) => violations(runs[runs === steady || runs === backlog ? 0 : 1] as DispatchRun))
    .reduce(
      (sum, count) => sum + count,
      endToEnd.orderViolations + hotBurstViolations(hotBurst.headline) + sweep.orderViolations,
    );
  return {
    area: "dispatch",
    tables,
    durationMs: performance.now() - startedAt,
    figures: {
      summary: {
        overheadVsRunner: overheadSync.telepaceVsRunner,
        overheadAsyncVsRunner: overheadAsync.telepaceVsRunner,
        backlogVsRunner,
        ...polling.summary,
        hotPrincipalOthersP99Ms: endToEnd.hotPrincipalOthersP99Ms,
        orderViolations: telepaceViolations,
        lostAfterCrash: endToEnd.lostAfterCrash,
        ...(({ rounds, ...figures }) => ({ floodRounds: rounds, ...figures }))(endToEnd.flood),
        floodFileVsRunner: endToEnd.floodFileVsRunner,
        hotBurstSeconds: hotBurst.headline.burstSeconds,
        hotBurstOthersP99Ms: hotBurst.headline.othersQueueingMs.p99,
        hotBurstRejected: hotBurst.headline.rejected,
        hotBurstHotLost: hotBurst.headline.hotLost,
        hotBurstHeapGrowthMB: hotBurst.headline.heapGrowthBytes / 1_048_576,
        ...sweep.summary,
      },
      config: { ...config, pollLimit: POLL_LIMIT },
      scenarioDurationsMs: clock.durationsMs(),
      steady,
      backlog,
      overhead: { sync: overheadSync, async: overheadAsync },
      ...endToEnd.figures,
      hotBurst: hotBurst.runs,
      roundTripSweep: sweep.byRoundTrip,
    },
  };
}

/** Overhead per update of each contender over direct calls, from CPU time, median of rounds. */
interface OverheadResult {
  readonly processor: "sync" | "async";
  /** The median run of each contender (by CPU time), direct calls first. */
  readonly runs: readonly DispatchRun[];
  /** Median over rounds of (contender's CPU − direct calls' CPU in that round) ÷ updates, µs. */
  readonly cpuOverheadPerUpdateUs: readonly number[];
  /** The same from wall-clock makespans, µs (noisy on a shared machine). */
  readonly wallOverheadPerUpdateUs: readonly number[];
  /** telepace's CPU overhead ÷ the runner's at equal concurrency. */
  readonly telepaceVsRunner: number;
  /** telepace's CPU overhead ÷ the runner's at its default concurrency. */
  readonly telepaceVsRunnerDefault: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
}

/**
 * Raw overhead: rounds of direct calls and every contender, interleaved; a contender's overhead
 * in a round is its CPU time (or makespan) minus the direct calls' of the same round.
 */
async function measureOverhead(
  config: DispatchConfig,
  stream: UpdateStream,
  isAsync: boolean,
): Promise<OverheadResult> {
  const rounds: DispatchRun[][] = [];
  for (let round = 0; round < config.overheadRepeats; round++) {
    const runs: DispatchRun[] = [];
    for (const contender of [directCalls(), ...contendersFor(config)]) {
      // No forced collection between overhead runs: it makes V8 drop the hidden classes of the
      // previous run's objects and recompile whatever relied on them, a cost of the harness
      // (a bot's dispatcher or runner lives as long as the process), not of the contender.
      runs.push(await replay(stream, contender, { isAsync }, false));
    }
    rounds.push(runs);
  }
  const count = (rounds[0] as DispatchRun[]).length;
  const perUpdate = (value: (run: DispatchRun) => number, index: number): number =>
    median(
      rounds.map(
        (runs) =>
          ((value(runs[index] as DispatchRun) - value(runs[0] as DispatchRun)) * 1000) /
          stream.updates.length,
      ),
    );
  const cpu = Array.from({ length: count }, (_, index) => perUpdate((run) => run.cpuMs, index));
  const wall = Array.from({ length: count }, (_, index) =>
    perUpdate((run) => run.makespanMs, index),
  );
  const runs = Array.from({ length: count }, (_, index) => {
    const sorted = rounds.map((round) => round[index] as DispatchRun);
    sorted.sort((a, b) => a.cpuMs - b.cpuMs);
    return sorted[Math.floor((sorted.length - 1) / 2)] as DispatchRun;
  });
  return {
    processor: isAsync ? "async" : "sync",
    runs,
    cpuOverheadPerUpdateUs: cpu,
    wallOverheadPerUpdateUs: wall,
    telepaceVsRunner: ratio(cpu[1] as number, cpu[2] as number),
    telepaceVsRunnerDefault: ratio(cpu[1] as number, cpu[3] as number),
  };
}

function overheadTable(config: DispatchConfig, result: OverheadResult, processor: string): Table {
  const telepace = result.cpuOverheadPerUpdateUs[1] as number;
  return {
    title: `Dispatch, raw overhead with ${processor}: ${describe(config.overhead)}, median of ${config.overheadRepeats}`,
    columns: [
      { header: "contender", align: "left" },
      { header: "CPU/update over direct" },
      { header: "vs telepace" },
      { header: "wall/update over direct" },
      { header: "order violations" },
    ],
    rows: result.runs.map((run, index) => [
      run.contender,
      index === 0 ? "—" : `${formatFixed(result.cpuOverheadPerUpdateUs[index] as number, 2)} µs`,
      index === 0
        ? "—"
        : formatRatio(ratio(result.cpuOverheadPerUpdateUs[index] as number, telepace)),
      index === 0 ? "—" : `${formatFixed(result.wallOverheadPerUpdateUs[index] as number, 2)} µs`,
      formatCount(violations(run)),
    ]),
    notes: [
      "CPU = process.cpuUsage() (user + system) around each run, minus the direct calls' of the same round, ÷ updates; the median over rounds",
      "wall-clock is shown for reference: on a shared machine it mostly measures other processes",
    ],
  };
}

// The dispatch comparison: the same update streams through UpdateDispatcher and grammY runner's
// sequentialize — steady arrivals, a backlog (overload) and raw overhead.

import { type HeapReading, HeapSampler } from "../heap.js";
import type { AreaResult } from "../report.js";
import { formatCount, formatFixed, formatRatio, ratio, type Summary, summarize } from "../stats.js";
import type { Table } from "../table.js";
import {
  type DispatchContender,
  directCalls,
  grammyRunner,
  POLL_LIMIT,
  telepaceDispatcher,
} from "./contenders.js";
import { ReplayRecorder, UpdateFeed } from "./replay.js";
import { makeUpdateStream, type StreamOptions, type UpdateStream } from "./workload.js";

/** Sizes of the dispatch comparison. */
export interface DispatchConfig {
  /** Concurrency given to both UpdateDispatcher and the runner's sink in the equal-settings rows. */
  readonly concurrency: number;
  readonly steady: StreamOptions;
  readonly backlog: StreamOptions;
  readonly overhead: StreamOptions;
  /** Repetitions of the overhead scenario (the median run is kept). */
  readonly overheadRepeats: number;
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
  overheadRepeats: 3,
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
  readonly outOfOrderStarts: number;
  readonly overlappingStarts: number;
  readonly duplicateStarts: number;
  readonly lost: number;
  readonly errors: number;
}

async function replay(stream: UpdateStream, contender: DispatchContender): Promise<DispatchRun> {
  const heap = new HeapSampler(5);
  let peakHeld = 0;
  const probe = setInterval(() => {
    peakHeld = Math.max(peakHeld, contender.held());
  }, 5);
  const startedAt = performance.now();
  const feed = new UpdateFeed(stream, startedAt);
  const recorder = new ReplayRecorder(stream, startedAt);
  const report = await contender.run(feed, recorder, stream.updates.length);
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

/** Runs the dispatch comparison. */
export async function runDispatch(config: DispatchConfig = dispatchConfig): Promise<AreaResult> {
  const startedAt = performance.now();
  await warmUp(config);

  const steadyStream = makeUpdateStream(config.steady);
  const steady: DispatchRun[] = [];
  for (const contender of contendersFor(config)) steady.push(await replay(steadyStream, contender));

  const backlogStream = makeUpdateStream(config.backlog);
  const backlog: DispatchRun[] = [];
  for (const contender of contendersFor(config))
    backlog.push(await replay(backlogStream, contender));

  // Overhead: repeated, contenders interleaved, the median makespan kept per contender.
  const overheadStream = makeUpdateStream(config.overhead);
  const samples = new Map<string, DispatchRun[]>();
  for (let round = 0; round < config.overheadRepeats; round++) {
    for (const contender of [directCalls(), ...contendersFor(config)]) {
      const run = await replay(overheadStream, contender);
      samples.set(run.contender, [...(samples.get(run.contender) ?? []), run]);
    }
  }
  const overhead = [...samples.values()].map((runs) => {
    const sorted = [...runs].sort((a, b) => a.makespanMs - b.makespanMs);
    return sorted[Math.floor((sorted.length - 1) / 2)] as DispatchRun;
  });
  const direct = overhead[0] as DispatchRun;
  const perUpdateUs = (run: DispatchRun): number =>
    ((run.makespanMs - direct.makespanMs) * 1000) / run.updates;
  const telepaceOverhead = overhead[1] as DispatchRun;

  const tables: Table[] = [
    loadTable(`Dispatch, steady load: ${describe(config.steady)}`, steady, [
      `equal settings: concurrency ${config.concurrency} on both sides; the third row is the runner's default sink`,
    ]),
    loadTable(`Dispatch, backlog (overload): ${describe(config.backlog)}`, backlog, [
      "updates/s here is the drain rate of the whole backlog; both pollers take at most 100 updates per poll",
    ]),
    {
      title: `Dispatch, raw overhead: ${describe(config.overhead)}, median of ${config.overheadRepeats}`,
      columns: [
        { header: "contender", align: "left" },
        { header: "time vs direct" },
        { header: "overhead/update vs telepace" },
        { header: "order violations" },
      ],
      rows: overhead.map((run) => [
        run.contender,
        formatRatio(ratio(run.makespanMs, direct.makespanMs)),
        run === direct ? "—" : formatRatio(ratio(perUpdateUs(run), perUpdateUs(telepaceOverhead))),
        formatCount(violations(run)),
      ]),
      notes: [
        `direct calls await the processor update after update; telepace adds ${formatFixed(perUpdateUs(telepaceOverhead), 2)} µs per update over them`,
      ],
    },
  ];
  return {
    area: "dispatch",
    tables,
    durationMs: performance.now() - startedAt,
    figures: {
      config: { ...config, pollLimit: POLL_LIMIT },
      steady,
      backlog,
      overhead: overhead.map((run) => ({
        ...run,
        overheadPerUpdateUs: run === direct ? 0 : perUpdateUs(run),
      })),
    },
  };
}

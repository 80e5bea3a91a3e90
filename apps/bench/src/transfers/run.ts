// The transfer comparison: downloads over a simulated shared link gated by the media scheduler,
// by p-queue or by nothing; fairness between equal files; grant overhead.

import { jainIndex } from "@telepace/testing";
import type { AreaResult } from "../report.js";
import { formatCount, formatFixed, formatRatio, ratio, type Summary, summarize } from "../stats.js";
import type { Table } from "../table.js";
import { CHUNK_BYTES, equalPlans, type MixedPlan, mixedPlans } from "./files.js";
import { type GateFactory, noLimitGate, pQueueGate, schedulerGate } from "./gates.js";
import { type GrantConfig, type GrantFigures, grantOverhead } from "./grants.js";
import { type GateRun, type LinkModel, simulate } from "./simulate.js";

const MiB = 1024 * 1024;
const KiB = 1024;

/** Sizes of the transfer comparison. */
export interface TransfersConfig {
  /** The shared link every download crosses. */
  readonly link: LinkModel;
  /** Large files from the start, small ones arriving while they run. */
  readonly mixed: MixedPlan;
  /** Equal files for the fairness figures, under a budget smaller than one file. */
  readonly equal: {
    readonly count: number;
    readonly sizeBytes: number;
    readonly budgetBytes: number;
  };
  /** The mixed workload again at these mean round trips, ms, for the round-trip table. */
  readonly roundTripsMs: readonly number[];
  readonly grants: GrantConfig;
  readonly seed: number;
}

/** The full-size configuration `pnpm bench` uses. */
export const transfersConfig: TransfersConfig = {
  link: { bytesPerSecond: 64 * MiB, roundTripMs: 5, roundTripJitter: 0.5 },
  mixed: {
    large: { count: 3, sizeBytes: 20 * MiB }, // the Bot API's download limit
    small: {
      count: 160,
      minBytes: 16 * KiB,
      maxBytes: 256 * KiB,
      firstStartMs: 100,
      intervalMs: 6,
    },
  },
  equal: { count: 8, sizeBytes: 4 * MiB, budgetBytes: 2 * MiB },
  roundTripsMs: [5, 30, 50],
  grants: { transfers: 1_000, grantsPerTransfer: 20, repeats: 5 },
  seed: 7,
};

/** The p-queue concurrency holding as many 512 KiB chunks as the scheduler's 16 MiB budget. */
const P_QUEUE_CONCURRENCY = (16 * MiB) / CHUNK_BYTES;

const NO_SLOT_CAPS = {
  maxActiveSmallTransfers: Number.POSITIVE_INFINITY,
  maxActiveLargeTransfers: Number.POSITIVE_INFINITY,
} as const;

/** The configuration the README recommends for mixed workloads. */
const RECOMMENDED_DOWNLOAD = { maxActiveSmallTransfers: Number.POSITIVE_INFINITY } as const;

/** A contender of one scenario, with a stable id for the summary. */
interface Contender {
  readonly id: string;
  readonly make: GateFactory;
}

/** The mixed scenario's contenders. */
function mixedContenders(): Contender[] {
  return [
    {
      id: "defaults",
      make: (clock) => schedulerGate(clock, " (defaults: 16 MiB, large 4 MiB, 5 small + 2 large)"),
    },
    {
      id: "originalLimits",
      make: (clock) =>
        schedulerGate(clock, " (original limits: 16 MiB, 5 small + 2 large)", {
          download: { maxLargeBytesInFlight: Number.POSITIVE_INFINITY },
        }),
    },
    { id: "pQueueFifo", make: () => pQueueGate(P_QUEUE_CONCURRENCY, false) },
    { id: "pQueueSmallFirst", make: () => pQueueGate(P_QUEUE_CONCURRENCY, true) },
    { id: "noLimit", make: () => noLimitGate() },
    {
      id: "recommended",
      make: (clock) =>
        schedulerGate(clock, " (recommended for mixed loads: defaults, small slots uncapped)", {
          download: RECOMMENDED_DOWNLOAD,
        }),
    },
    {
      id: "capsOffOriginal",
      make: (clock) =>
        schedulerGate(clock, " (original limits, slot caps off)", {
          download: { ...NO_SLOT_CAPS, maxLargeBytesInFlight: Number.POSITIVE_INFINITY },
        }),
    },
  ];
}

/** The fairness scenario's contenders; the first is the baseline of the table's ratios. */
function fairnessContenders(config: TransfersConfig): Contender[] {
  const budget = config.equal.budgetBytes;
  const label = `${budget / MiB} MiB`;
  return [
    {
      id: "defaults",
      make: (clock) =>
        schedulerGate(clock, ` (${label}, default slot caps)`, {
          download: { maxBytesInFlight: budget },
        }),
    },
    { id: "pQueue", make: () => pQueueGate(budget / CHUNK_BYTES, false) },
    { id: "noLimit", make: () => noLimitGate() },
    {
      id: "capsOff",
      make: (clock) =>
        schedulerGate(
          clock,
          ` (${label}, slot caps off)`,
          { download: { maxBytesInFlight: budget, ...NO_SLOT_CAPS } },
          { slotCaps: false },
        ),
    },
  ];
}

/** Figures of one gate in the mixed scenario. */
export interface MixedFigures {
  readonly id: string;
  readonly gate: string;
  readonly settings: GateRun["settings"];
  readonly smallCompletionMs: Summary;
  readonly largeCompletionMs: Summary;
  readonly makespanMs: number;
  readonly throughputBytesPerSecond: number;
  /** Throughput ÷ the link's bandwidth. */
  readonly throughputVsLink: number;
  readonly peakBytesInFlight: number;
}

/** Figures of one gate in the equal-transfers scenario. */
export interface FairnessFigures {
  readonly id: string;
  readonly gate: string;
  /** Jain's index over the bytes each file had received when the first file finished. */
  readonly jainFromFirstGrant: number;
  /**
   * Jain's index over the bytes each file received from the moment every file had a response
   * flowing until the first file finished (NaN when the first finished before that).
   */
  readonly jainBacklogged: number;
  readonly bytesAtFirstFinish: readonly number[];
  readonly completionMs: Summary;
}

/** The ids of the round-trip table's contenders, in its column order. */
const ROUND_TRIP_IDS = ["defaults", "recommended", "originalLimits", "pQueueFifo"] as const;

/** The mixed scenario at one mean round trip. */
export interface RoundTripFigures {
  readonly roundTripMs: number;
  readonly mixed: readonly MixedFigures[];
}

/** The headline ratios, as `areas.transfers.summary` in results/latest.json. */
export interface TransfersSummary {
  /** Equal files, slot caps off: Jain's index from the first grant to the first finish. */
  readonly jainFromFirstGrant: number;
  /** The same, counted from when every file is backlogged. */
  readonly jainBacklogged: number;
  /** Small-file p99, the recommended configuration ÷ p-queue first come first served. */
  readonly smallP99VsPqueueFifo: number;
  /** Small-file p99, the defaults ÷ p-queue first come first served. */
  readonly smallP99VsPqueueFifoDefaults: number;
  /** Large-file mean completion, the recommended configuration ÷ no limit. */
  readonly largeMeanVsNoLimit: number;
  /** Overhead per grant, the scheduler ÷ p-queue. */
  readonly grantCostVsPqueue: number;
  /** Throughput of the recommended configuration ÷ the link's bandwidth. */
  readonly throughputVsLink: number;
}

function mixedFigures(id: string, run: GateRun, link: LinkModel): MixedFigures {
  const throughput = (run.bytes * 1000) / run.makespanMs;
  const durations = (kind: "small" | "large"): number[] =>
    run.files.filter((file) => file.kind === kind).map((file) => file.durationMs);
  return {
    id,
    gate: run.gate,
    settings: run.settings,
    smallCompletionMs: summarize(durations("small")),
    largeCompletionMs: summarize(durations("large")),
    makespanMs: run.makespanMs,
    throughputBytesPerSecond: throughput,
    throughputVsLink: throughput / link.bytesPerSecond,
    peakBytesInFlight: run.peakBytesInFlight,
  };
}

function fairnessFigures(id: string, run: GateRun): FairnessFigures {
  const atStart = run.bytesWhenAllFlowing;
  return {
    id,
    gate: run.gate,
    jainFromFirstGrant: jainIndex(run.bytesAtFirstFinish),
    jainBacklogged:
      atStart === undefined
        ? Number.NaN
        : jainIndex(run.bytesAtFirstFinish.map((bytes, index) => bytes - (atStart[index] ?? 0))),
    bytesAtFirstFinish: run.bytesAtFirstFinish,
    completionMs: summarize(run.files.map((file) => file.durationMs)),
  };
}

function mb(bytes: number): string {
  return `${formatFixed(bytes / MiB, 1)} MiB`;
}

function byId<T extends { readonly id: string }>(rows: readonly T[], id: string): T {
  const row = rows.find((candidate) => candidate.id === id);
  if (row === undefined) throw new Error(`no row ${id}`);
  return row;
}

/** Runs the transfer comparison. */
export async function runTransfers(config: TransfersConfig = transfersConfig): Promise<AreaResult> {
  const startedAt = performance.now();
  const mixedFiles = mixedPlans(config.mixed, config.seed);
  const equalFiles = equalPlans(config.equal.count, config.equal.sizeBytes, 20 * MiB);
  const runMixed = async (link: LinkModel, ids?: readonly string[]): Promise<MixedFigures[]> => {
    const rows: MixedFigures[] = [];
    for (const contender of mixedContenders()) {
      if (ids !== undefined && !ids.includes(contender.id)) continue;
      rows.push(mixedFigures(contender.id, await simulate(contender.make, mixedFiles, link), link));
    }
    return rows;
  };
  const mixed = await runMixed(config.link);
  const byRoundTrip: RoundTripFigures[] = [];
  for (const roundTripMs of config.roundTripsMs) {
    const rows = await runMixed({ ...config.link, roundTripMs }, ROUND_TRIP_IDS);
    byRoundTrip.push({ roundTripMs, mixed: rows });
  }
  const fairness: FairnessFigures[] = [];
  for (const contender of fairnessContenders(config)) {
    fairness.push(
      fairnessFigures(contender.id, await simulate(contender.make, equalFiles, config.link)),
    );
  }
  const grants = await grantOverhead(config.grants);

  const recommended = byId(mixed, "recommended");
  const fifo = byId(mixed, "pQueueFifo");
  const noLimit = byId(mixed, "noLimit");
  const fairCapsOff = byId(fairness, "capsOff");
  const grantScheduler = grants[1] as GrantFigures;
  const grantPQueue = grants[2] as GrantFigures;
  const summary: TransfersSummary = {
    jainFromFirstGrant: fairCapsOff.jainFromFirstGrant,
    jainBacklogged: fairCapsOff.jainBacklogged,
    smallP99VsPqueueFifo: ratio(recommended.smallCompletionMs.p99, fifo.smallCompletionMs.p99),
    smallP99VsPqueueFifoDefaults: ratio(
      byId(mixed, "defaults").smallCompletionMs.p99,
      fifo.smallCompletionMs.p99,
    ),
    largeMeanVsNoLimit: ratio(recommended.largeCompletionMs.mean, noLimit.largeCompletionMs.mean),
    grantCostVsPqueue: ratio(grantScheduler.overheadPerGrantUs, grantPQueue.overheadPerGrantUs),
    throughputVsLink: recommended.throughputVsLink,
  };

  const { link } = config;
  const fairBase = fairness[0] as FairnessFigures;
  const tables: Table[] = [
    {
      title: `Transfers, small files while large ones run: ${config.mixed.large.count} × ${mb(config.mixed.large.sizeBytes)} from t=0, ${config.mixed.small.count} small files of ${config.mixed.small.minBytes / KiB}–${config.mixed.small.maxBytes / KiB} KiB one every ${config.mixed.small.intervalMs} ms, ${mb(link.bytesPerSecond)}/s link with ${link.roundTripMs} ms ± ${link.roundTripJitter * 100}% round trips (simulated time)`,
      columns: [
        { header: "gate", align: "left" },
        { header: "small p50 vs p-queue FIFO" },
        { header: "small p99 vs p-queue FIFO" },
        { header: "large mean vs no limit" },
        { header: "throughput vs link" },
        { header: "peak in flight" },
      ],
      rows: mixed.map((figures) => [
        figures.gate,
        formatRatio(ratio(figures.smallCompletionMs.p50, fifo.smallCompletionMs.p50)),
        formatRatio(ratio(figures.smallCompletionMs.p99, fifo.smallCompletionMs.p99)),
        formatRatio(ratio(figures.largeCompletionMs.mean, noLimit.largeCompletionMs.mean)),
        formatRatio(figures.throughputVsLink),
        mb(figures.peakBytesInFlight),
      ]),
      notes: [
        `p-queue first come first served: small p50 ${formatFixed(fifo.smallCompletionMs.p50, 0)} ms, p99 ${formatFixed(fifo.smallCompletionMs.p99, 0)} ms; no limit: large mean ${formatFixed(noLimit.largeCompletionMs.mean, 0)} ms (simulated)`,
        `every file requests all its ${CHUNK_BYTES / KiB} KiB Range chunks at once and the gate decides when each runs; p-queue's ${P_QUEUE_CONCURRENCY} slots hold as many chunks as the scheduler's 16 MiB`,
        "each request waits one round trip, then its response shares the link evenly with every response in flight, as TCP flows share a bottleneck; time is simulated, so CPU load changes nothing",
      ],
    },
    {
      title: `Transfers, fairness: ${config.equal.count} equal files of ${mb(config.equal.sizeBytes)} started together, ${mb(config.equal.budgetBytes)} budget (p-queue: ${config.equal.budgetBytes / CHUNK_BYTES} slots)`,
      columns: [
        { header: "gate", align: "left" },
        { header: "Jain's index from first grant" },
        { header: "Jain's index once all backlogged" },
        { header: "completion p50" },
        { header: "completion max" },
      ],
      rows: fairness.map((figures) => [
        figures.gate,
        formatFixed(figures.jainFromFirstGrant, 3),
        formatFixed(figures.jainBacklogged, 3),
        formatRatio(ratio(figures.completionMs.p50, fairBase.completionMs.p50)),
        formatRatio(ratio(figures.completionMs.max, fairBase.completionMs.max)),
      ]),
      notes: [
        "Jain's index over the bytes each file had received when the first file finished (1 = equal shares, 1/n = one file took all); 'once all backlogged' counts only the bytes received after every file had a response flowing",
        "the scheduler's default caps admit 5 small transfers at a time (the rest wait for a slot); the last row lifts the caps to show the round robin alone",
        "completion ratios are each row ÷ the first row",
      ],
    },
    {
      title: `Transfers, grant overhead at ${formatCount(config.grants.transfers)} transfers (${formatCount(config.grants.grantsPerTransfer)} grants each, no I/O, real time, median of ${config.grants.repeats})`,
      columns: [
        { header: "contender", align: "left" },
        { header: "time vs no gate" },
        { header: "overhead/grant vs p-queue" },
      ],
      rows: grants.map((figures, index) => [
        figures.contender,
        formatRatio(ratio(figures.elapsedMs, (grants[0] as GrantFigures).elapsedMs)),
        index === 0
          ? "—"
          : formatRatio(ratio(figures.overheadPerGrantUs, grantPQueue.overheadPerGrantUs)),
      ]),
      notes: [
        `telepace: ${formatFixed(grantScheduler.overheadPerGrantUs, 2)} µs per grant over the bare loop; p-queue: ${formatFixed(grantPQueue.overheadPerGrantUs, 2)} µs`,
      ],
    },
    {
      title: `Transfers, the mixed load at longer round trips (±${config.link.roundTripJitter * 100}% jitter): small p99 vs p-queue first come first served, and throughput vs link`,
      columns: [
        { header: "round trip", align: "left" },
        { header: "defaults p99" },
        { header: "recommended p99" },
        { header: "original limits p99" },
        { header: "defaults throughput" },
        { header: "recommended throughput" },
        { header: "original limits throughput" },
      ],
      rows: byRoundTrip.map(({ roundTripMs, mixed: rows }) => {
        const base = byId(rows, "pQueueFifo").smallCompletionMs.p99;
        const p99 = (id: string) => formatRatio(ratio(byId(rows, id).smallCompletionMs.p99, base));
        const throughput = (id: string) => formatRatio(byId(rows, id).throughputVsLink);
        return [
          `${roundTripMs} ms`,
          p99("defaults"),
          p99("recommended"),
          p99("originalLimits"),
          throughput("defaults"),
          throughput("recommended"),
          throughput("originalLimits"),
        ];
      }),
      notes: [
        "with longer round trips each small file takes longer, and 5 active small transfers no longer keep up with one arriving every 6 ms: lift that cap (the recommended configuration)",
      ],
    },
    {
      title: "Transfers, summary (areas.transfers.summary)",
      columns: [{ header: "figure", align: "left" }, { header: "value" }],
      rows: Object.entries(summary).map(([key, value]) => [key, formatFixed(value as number, 3)]),
      notes: [],
    },
  ];
  return {
    area: "transfers",
    tables,
    durationMs: performance.now() - startedAt,
    figures: {
      config: { ...config, chunkBytes: CHUNK_BYTES, pQueueConcurrency: P_QUEUE_CONCURRENCY },
      summary,
      mixed,
      byRoundTrip,
      fairness,
      grants,
    },
  };
}

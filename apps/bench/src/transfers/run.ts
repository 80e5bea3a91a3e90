// The transfer comparison: downloads from the sim over a shared link gated by the media
// scheduler, by p-queue or by nothing; fairness between equal files; grant overhead.

import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { MediaSchedulerRegistry } from "@telepace/media-scheduler";
import PQueue from "p-queue";
import { Agent } from "undici";
import { randomInt, seededRandom } from "../random.js";
import type { AreaResult } from "../report.js";
import {
  formatCount,
  formatFixed,
  formatRatio,
  jainIndex,
  ratio,
  type Summary,
  summarize,
} from "../stats.js";
import type { Table } from "../table.js";
import {
  CHUNK_BYTES,
  chunksOf,
  downloadChunk,
  type FilePlan,
  type FileSpec,
  uploadFiles,
} from "./files.js";
import { type Gate, noLimitGate, pQueueGate, schedulerGate } from "./gates.js";
import { ShapedLink } from "./link.js";

const MiB = 1024 * 1024;
const KiB = 1024;

/** Sizes of the transfer comparison. */
export interface TransfersConfig {
  /** Bandwidth of the shared link, bytes/s. */
  readonly linkBytesPerSecond: number;
  readonly large: { readonly count: number; readonly sizeBytes: number };
  readonly small: {
    readonly count: number;
    readonly minBytes: number;
    readonly maxBytes: number;
    /** The first small download starts this long after the large ones, ms. */
    readonly firstStartMs: number;
    /** Gap between small download starts, ms. */
    readonly intervalMs: number;
  };
  /** Equal files for the fairness figure, under a budget smaller than one file. */
  readonly equal: {
    readonly count: number;
    readonly sizeBytes: number;
    readonly budgetBytes: number;
  };
  /** Runs of each scenario per gate (gates interleaved); figures are medians over them. */
  readonly repeats: number;
  readonly grants: {
    readonly transfers: number;
    readonly grantsPerTransfer: number;
    readonly repeats: number;
  };
  readonly seed: number;
}

/** The full-size configuration `pnpm bench` uses. */
export const transfersConfig: TransfersConfig = {
  linkBytesPerSecond: 64 * MiB,
  large: { count: 3, sizeBytes: 20 * MiB }, // the Bot API's download limit
  small: { count: 160, minBytes: 16 * KiB, maxBytes: 256 * KiB, firstStartMs: 100, intervalMs: 6 },
  equal: { count: 8, sizeBytes: 4 * MiB, budgetBytes: 2 * MiB },
  repeats: 3,
  grants: { transfers: 1_000, grantsPerTransfer: 20, repeats: 3 },
  seed: 7,
};

/** The p-queue concurrency holding as many 512 KiB chunks as the scheduler's 16 MiB budget. */
const P_QUEUE_CONCURRENCY = (16 * MiB) / CHUNK_BYTES;

const NO_SLOT_CAPS = {
  maxActiveSmallTransfers: Number.POSITIVE_INFINITY,
  maxActiveLargeTransfers: Number.POSITIVE_INFINITY,
} as const;

/** Fresh gates for one round of the mixed scenario; the first is the baseline. */
function mixedGates(): Gate[] {
  return [
    schedulerGate(" (defaults: 16 MiB, 5 small + 2 large)"),
    pQueueGate(P_QUEUE_CONCURRENCY, false),
    pQueueGate(P_QUEUE_CONCURRENCY, true),
    noLimitGate(),
    schedulerGate(" (16 MiB, slot caps off)", { download: NO_SLOT_CAPS }, { slotCaps: false }),
    schedulerGate(
      " (16 MiB, slot caps off, large in background)",
      { download: NO_SLOT_CAPS },
      { slotCaps: false, largeInBackground: true },
      true,
    ),
  ];
}

/** Fresh gates for one round of the fairness scenario; the first is the baseline. */
function fairnessGates(config: TransfersConfig): Gate[] {
  const budget = config.equal.budgetBytes;
  const label = `${budget / MiB} MiB`;
  return [
    schedulerGate(` (${label}, default slot caps)`, { download: { maxBytesInFlight: budget } }),
    pQueueGate(budget / CHUNK_BYTES, false),
    noLimitGate(),
    schedulerGate(
      ` (${label}, slot caps off)`,
      { download: { maxBytesInFlight: budget, ...NO_SLOT_CAPS } },
      { slotCaps: false },
    ),
  ];
}

interface Arena {
  readonly sim: BotApiSim;
  readonly link: ShapedLink;
  readonly root: string;
}

/** One file's download as measured. */
interface FileRun {
  readonly name: string;
  readonly kind: "small" | "large";
  readonly sizeBytes: number;
  readonly startMs: number;
  /** From the file's start to its last byte, ms. */
  readonly durationMs: number;
}

interface GateRun {
  readonly files: FileRun[];
  readonly makespanMs: number;
  readonly bytes: number;
  readonly peakBytesInFlight: number;
  /** Bytes each file had received when the first file finished. */
  readonly bytesAtFirstFinish: number[];
}

async function download(arena: Arena, gate: Gate, files: readonly FileSpec[]): Promise<GateRun> {
  const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
  const received = new Array<number>(files.length).fill(0);
  let bytesAtFirstFinish: number[] | undefined;
  let inFlight = 0;
  let peakInFlight = 0;
  const startedAt = performance.now();
  const runs = await Promise.all(
    files.map(async (file, index): Promise<FileRun> => {
      const wait = startedAt + file.startMs - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const fileStartedAt = performance.now();
      const transfer = gate.open(file);
      try {
        await Promise.all(
          chunksOf(file.sizeBytes).map((chunk) =>
            transfer.run(chunk.length, async () => {
              inFlight += chunk.length;
              peakInFlight = Math.max(peakInFlight, inFlight);
              try {
                return await downloadChunk(
                  dispatcher,
                  arena.root,
                  arena.sim.token,
                  file,
                  chunk,
                  (bytes) => {
                    received[index] = (received[index] as number) + bytes;
                  },
                );
              } finally {
                inFlight -= chunk.length;
              }
            }),
          ),
        );
      } finally {
        transfer.close();
      }
      bytesAtFirstFinish ??= [...received];
      return {
        name: file.name,
        kind: file.kind,
        sizeBytes: file.sizeBytes,
        startMs: file.startMs,
        durationMs: performance.now() - fileStartedAt,
      };
    }),
  );
  const makespanMs = performance.now() - startedAt;
  await dispatcher.close();
  await gate.dispose();
  return {
    files: runs,
    makespanMs,
    bytes: files.reduce((sum, file) => sum + file.sizeBytes, 0),
    peakBytesInFlight: peakInFlight,
    bytesAtFirstFinish: bytesAtFirstFinish ?? [],
  };
}

function mixedPlans(config: TransfersConfig): FilePlan[] {
  const random = seededRandom(config.seed);
  const plans: FilePlan[] = [];
  for (let index = 0; index < config.large.count; index++) {
    plans.push({
      name: `large-${index}`,
      sizeBytes: config.large.sizeBytes,
      kind: "large",
      startMs: 0,
    });
  }
  for (let index = 0; index < config.small.count; index++) {
    plans.push({
      name: `small-${index}`,
      sizeBytes: randomInt(random, config.small.minBytes / KiB, config.small.maxBytes / KiB) * KiB,
      kind: "small",
      startMs: config.small.firstStartMs + index * config.small.intervalMs,
    });
  }
  return plans;
}

function equalPlans(config: TransfersConfig): FilePlan[] {
  return Array.from({ length: config.equal.count }, (_, index) => ({
    name: `equal-${index}`,
    sizeBytes: config.equal.sizeBytes,
    kind: config.equal.sizeBytes >= 20 * MiB ? ("large" as const) : ("small" as const),
    startMs: 0,
  }));
}

/** Figures of one gate in the mixed scenario. */
export interface MixedFigures {
  readonly gate: string;
  readonly settings: Gate["settings"];
  /** Runs the medians are taken over. */
  readonly runs: number;
  readonly smallCompletionMs: Summary;
  readonly largeCompletionMs: Summary;
  readonly makespanMs: number;
  readonly throughputBytesPerSecond: number;
  readonly throughputVsNoLimit: number;
  readonly peakBytesInFlight: number;
}

/** Figures of one gate in the equal-transfers scenario. */
export interface FairnessFigures {
  readonly gate: string;
  readonly runs: number;
  /** Jain's index over bytes received per file when the first file finished. */
  readonly jainAtFirstFinish: number;
  /** Per run: bytes each file had received when the first file finished. */
  readonly bytesAtFirstFinish: readonly (readonly number[])[];
  readonly completionMs: Summary;
}

/** Figures of the grant-overhead microbenchmark. */
export interface GrantFigures {
  readonly contender: string;
  readonly grants: number;
  readonly elapsedMs: number;
  /** Elapsed minus the no-gate loop, per grant, µs. */
  readonly overheadPerGrantUs: number;
}

/** 1,000 transfers (or tasks) each taking grants in a loop; nothing else happens per grant. */
async function grantLoop(
  config: TransfersConfig,
  kind: "scheduler" | "p-queue" | "none",
): Promise<number> {
  const { transfers, grantsPerTransfer } = config.grants;
  const startedAt = performance.now();
  if (kind === "scheduler") {
    // Uploads have no transfer-count caps, so all 1,000 transfers sit in the rotation at once.
    const registry = new MediaSchedulerRegistry();
    await Promise.all(
      Array.from({ length: transfers }, async () => {
        using transfer = registry.open({ dc: "grants", direction: "upload", sizeBytes: MiB });
        for (let grant = 0; grant < grantsPerTransfer; grant++) {
          using _permit = await transfer.acquire(64 * KiB);
          await Promise.resolve();
        }
      }),
    );
    await registry.close();
  } else if (kind === "p-queue") {
    const queue = new PQueue({ concurrency: (8 * MiB) / (64 * KiB) });
    await Promise.all(
      Array.from({ length: transfers }, async () => {
        for (let grant = 0; grant < grantsPerTransfer; grant++) {
          await queue.add(async () => {
            await Promise.resolve();
          });
        }
      }),
    );
  } else {
    await Promise.all(
      Array.from({ length: transfers }, async () => {
        for (let grant = 0; grant < grantsPerTransfer; grant++) {
          await (async () => {
            await Promise.resolve();
          })();
        }
      }),
    );
  }
  return performance.now() - startedAt;
}

async function grantOverhead(config: TransfersConfig): Promise<GrantFigures[]> {
  const kinds = ["none", "scheduler", "p-queue"] as const;
  const samples = new Map<string, number[]>(kinds.map((kind) => [kind, []]));
  for (const kind of kinds)
    await grantLoop({ ...config, grants: { ...config.grants, transfers: 100 } }, kind);
  for (let round = 0; round < config.grants.repeats; round++) {
    for (const kind of kinds) samples.get(kind)?.push(await grantLoop(config, kind));
  }
  const median = (kind: string): number => summarize(samples.get(kind) ?? []).p50;
  const grants = config.grants.transfers * config.grants.grantsPerTransfer;
  const floor = median("none");
  const names: Record<(typeof kinds)[number], string> = {
    none: "no gate (the loop alone)",
    scheduler: "telepace media-scheduler (upload, 8 MiB = 128 permits of 64 KiB)",
    "p-queue": "p-queue (concurrency 128)",
  };
  return kinds.map((kind) => ({
    contender: names[kind],
    grants,
    elapsedMs: median(kind),
    overheadPerGrantUs: kind === "none" ? 0 : ((median(kind) - floor) * 1000) / grants,
  }));
}

async function withArena<T>(
  config: TransfersConfig,
  body: (arena: Arena) => Promise<T>,
): Promise<T> {
  const sim = await start({ rateLimits: false, maxFileStorageBytes: 1024 * MiB });
  const link = new ShapedLink({ targetPort: sim.port, bytesPerSecond: config.linkBytesPerSecond });
  try {
    const port = await link.listen();
    return await body({ sim, link, root: `http://127.0.0.1:${port}` });
  } finally {
    await link.close();
    await sim.close({ timeoutMs: 1_000 });
  }
}

function mb(bytes: number): string {
  return `${formatFixed(bytes / MiB, 1)} MiB`;
}

function median(values: readonly number[]): number {
  return summarize(values).p50;
}

/** The median of each figure over repeated runs of one gate. */
function medianSummary(summaries: readonly Summary[]): Summary {
  const pick = (key: keyof Summary): number => median(summaries.map((summary) => summary[key]));
  return {
    count: pick("count"),
    min: pick("min"),
    p50: pick("p50"),
    p90: pick("p90"),
    p99: pick("p99"),
    max: pick("max"),
    mean: pick("mean"),
  };
}

/**
 * Runs every gate `repeats` times, gates interleaved so slow moments of a busy machine spread
 * over all of them; returns the runs per gate, in the order of the first round.
 */
async function rounds(
  repeats: number,
  makeGates: () => Gate[],
  runOne: (gate: Gate) => Promise<GateRun>,
): Promise<{ name: string; settings: Gate["settings"]; runs: GateRun[] }[]> {
  const byName = new Map<string, { name: string; settings: Gate["settings"]; runs: GateRun[] }>();
  for (let round = 0; round < repeats; round++) {
    for (const gate of makeGates()) {
      const entry = byName.get(gate.name) ?? { name: gate.name, settings: gate.settings, runs: [] };
      byName.set(gate.name, entry);
      entry.runs.push(await runOne(gate));
    }
  }
  return [...byName.values()];
}

/** Runs the transfer comparison. */
export async function runTransfers(config: TransfersConfig = transfersConfig): Promise<AreaResult> {
  const startedAt = performance.now();
  const { mixed, fairness } = await withArena(config, async (arena) => {
    const mixedFiles = await uploadFiles(arena.sim, mixedPlans(config), config.seed);
    const equalFiles = await uploadFiles(arena.sim, equalPlans(config), config.seed + 1);
    // Warm up every gate (JIT, sockets) on a few files before measuring.
    const warmFiles = mixedFiles.filter((file) => file.kind === "small").slice(0, 8);
    for (const gate of [...mixedGates(), ...fairnessGates(config)]) {
      await download(arena, gate, warmFiles);
    }
    const mixedRounds = await rounds(config.repeats, mixedGates, (gate) =>
      download(arena, gate, mixedFiles),
    );
    const fairnessRounds = await rounds(
      config.repeats,
      () => fairnessGates(config),
      (gate) => download(arena, gate, equalFiles),
    );
    const throughputOf = (run: GateRun): number => (run.bytes * 1000) / run.makespanMs;
    const ceiling = median(
      (mixedRounds.find((entry) => entry.name === "no limit")?.runs ?? []).map(throughputOf),
    );
    return {
      mixed: mixedRounds.map(({ name, settings, runs }): MixedFigures => {
        const throughput = median(runs.map(throughputOf));
        return {
          gate: name,
          settings,
          runs: runs.length,
          smallCompletionMs: medianSummary(
            runs.map((run) =>
              summarize(
                run.files.filter((file) => file.kind === "small").map((file) => file.durationMs),
              ),
            ),
          ),
          largeCompletionMs: medianSummary(
            runs.map((run) =>
              summarize(
                run.files.filter((file) => file.kind === "large").map((file) => file.durationMs),
              ),
            ),
          ),
          makespanMs: median(runs.map((run) => run.makespanMs)),
          throughputBytesPerSecond: throughput,
          throughputVsNoLimit: throughput / ceiling,
          peakBytesInFlight: Math.max(...runs.map((run) => run.peakBytesInFlight)),
        };
      }),
      fairness: fairnessRounds.map(
        ({ name, runs }): FairnessFigures => ({
          gate: name,
          runs: runs.length,
          jainAtFirstFinish: median(runs.map((run) => jainIndex(run.bytesAtFirstFinish))),
          bytesAtFirstFinish: runs.map((run) => run.bytesAtFirstFinish),
          completionMs: medianSummary(
            runs.map((run) => summarize(run.files.map((file) => file.durationMs))),
          ),
        }),
      ),
    };
  });
  const grants = await grantOverhead(config);

  const base = mixed[0] as MixedFigures;
  const fairBase = fairness[0] as FairnessFigures;
  const grantBase = grants[1] as GrantFigures;
  const tables: Table[] = [
    {
      title: `Transfers, small files while large ones run: ${config.large.count} × ${mb(config.large.sizeBytes)} from t=0, ${config.small.count} small files of ${config.small.minBytes / KiB}–${config.small.maxBytes / KiB} KiB one every ${config.small.intervalMs} ms, shared ${mb(config.linkBytesPerSecond)}/s link, median of ${config.repeats}`,
      columns: [
        { header: "gate", align: "left" },
        { header: "small p50" },
        { header: "small p99" },
        { header: "large mean" },
        { header: "throughput vs no limit" },
        { header: "peak in flight" },
      ],
      rows: mixed.map((figures) => [
        figures.gate,
        formatRatio(ratio(figures.smallCompletionMs.p50, base.smallCompletionMs.p50)),
        formatRatio(ratio(figures.smallCompletionMs.p99, base.smallCompletionMs.p99)),
        formatRatio(ratio(figures.largeCompletionMs.mean, base.largeCompletionMs.mean)),
        formatRatio(figures.throughputVsNoLimit),
        mb(figures.peakBytesInFlight),
      ]),
      notes: [
        `completion ratios are each row ÷ the first row; it measured small p50 ${formatFixed(base.smallCompletionMs.p50, 0)} ms, p99 ${formatFixed(base.smallCompletionMs.p99, 0)} ms, large mean ${formatFixed(base.largeCompletionMs.mean, 0)} ms`,
        `every file requests all its ${CHUNK_BYTES / KiB} KiB Range chunks at once and the gate decides when each runs; p-queue's ${P_QUEUE_CONCURRENCY} slots hold as many chunks as the scheduler's 16 MiB`,
        "the link shares its bandwidth evenly between connections with data waiting, as TCP flows share a bottleneck",
      ],
    },
    {
      title: `Transfers, fairness: ${config.equal.count} equal files of ${mb(config.equal.sizeBytes)} started together, ${mb(config.equal.budgetBytes)} budget (p-queue: ${config.equal.budgetBytes / CHUNK_BYTES} slots), median of ${config.repeats}`,
      columns: [
        { header: "gate", align: "left" },
        { header: "Jain's index at first finish" },
        { header: "completion p50" },
        { header: "completion max" },
      ],
      rows: fairness.map((figures) => [
        figures.gate,
        formatFixed(figures.jainAtFirstFinish, 3),
        formatRatio(ratio(figures.completionMs.p50, fairBase.completionMs.p50)),
        formatRatio(ratio(figures.completionMs.max, fairBase.completionMs.max)),
      ]),
      notes: [
        "Jain's index over the bytes each file had received when the first file finished (1 = equal shares, 1/n = one file took all)",
        "a budget of half a file keeps the files contending for most of their download, as a 16 MiB budget does for files much larger than that",
        "the scheduler's default caps admit 5 small transfers at a time (the rest wait for a slot); the last row lifts the caps to show the round robin alone",
      ],
    },
    {
      title: `Transfers, grant overhead at ${formatCount(config.grants.transfers)} transfers (${formatCount(config.grants.grantsPerTransfer)} grants each, no I/O, median of ${config.grants.repeats})`,
      columns: [
        { header: "contender", align: "left" },
        { header: "time vs no gate" },
        { header: "overhead/grant vs telepace" },
      ],
      rows: grants.map((figures, index) => [
        figures.contender,
        formatRatio(ratio(figures.elapsedMs, (grants[0] as GrantFigures).elapsedMs)),
        index === 0
          ? "—"
          : formatRatio(ratio(figures.overheadPerGrantUs, grantBase.overheadPerGrantUs)),
      ]),
      notes: [
        `telepace: ${formatFixed(grantBase.overheadPerGrantUs, 2)} µs per grant over the bare loop`,
      ],
    },
  ];
  return {
    area: "transfers",
    tables,
    durationMs: performance.now() - startedAt,
    figures: {
      config: { ...config, chunkBytes: CHUNK_BYTES, pQueueConcurrency: P_QUEUE_CONCURRENCY },
      mixed,
      fairness,
      grants,
    },
  };
}

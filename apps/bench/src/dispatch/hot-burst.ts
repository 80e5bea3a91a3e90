// A long hot burst against the simulator: one principal sends ten times faster than it can be
// served, for half a minute, while hundreds of others chat normally. What everybody else waits,
// whether anything is refused, how much the process's live heap grows during the burst, and
// whether the hot principal's whole backlog is processed, in order, once the burst is over.

import { collectGarbage } from "../heap.js";
import type { BenchScope } from "../scope.js";
import { formatCount, formatFixed, type Summary, summarize } from "../stats.js";
import type { Table } from "../table.js";
import { QUEUEING_COLUMNS, queueingCells, roundTripLabel } from "./end-to-end.js";
import { intakePoller, type PollerContender, runnerPoller } from "./pollers.js";
import { ReplayRecorder } from "./replay.js";
import { openSimLink, sendArrivals, simIndexOf } from "./sim-link.js";
import { temporaryFileJournal } from "./temporary-journal.js";
import { HOT_PRINCIPAL, makeUpdateStream, type UpdateStream } from "./workload.js";

/** Sizes of the hot-burst scenario. */
export interface HotBurstConfig {
  /** How long the burst lasts, s. */
  readonly burstSeconds: number;
  /** Principals besides the hot one, each a private chat. */
  readonly others: number;
  /** How often each of the others sends, per second. */
  readonly otherPerSecond: number;
  /** How many times faster than it is served the hot principal sends. */
  readonly hotFactor: number;
  /** Simulated I/O of each update while the burst lasts, ms, uniform in [min, max]. */
  readonly ioMs: readonly [min: number, max: number];
  /** Added by the simulator to every Bot API call, ms. */
  readonly latencyMs: number;
  /** After the burst, how long the backlog may take to drain before what is left counts, ms. */
  readonly drainMs: number;
  readonly seed: number;
}

/** The full-size configuration. */
export const hotBurstConfig: HotBurstConfig = {
  burstSeconds: 30,
  others: 500,
  otherPerSecond: 0.5,
  hotFactor: 10,
  ioMs: [5, 15],
  latencyMs: 2,
  drainMs: 60_000,
  seed: 14,
};

/** What one contender measured. */
export interface HotBurstRun {
  readonly contender: string;
  readonly settings: Readonly<Record<string, number | string | boolean>>;
  /** The median of getMe calls timed before the run, ms: the round trip it ran at. */
  readonly measuredRoundTripMs: number;
  readonly updates: number;
  readonly hotUpdates: number;
  /** From the first send to the last, s. */
  readonly burstSeconds: number;
  /** Processor start − send, of everybody but the hot principal, ms. */
  readonly othersQueueingMs: Summary;
  /** The same for the hot principal. */
  readonly hotQueueingMs: Summary;
  /** Updates a bound refused (the intake's dispatcher rejections and `busy` answers). */
  readonly rejected: number;
  /** Stored-but-unfinished updates at most (the intake), tasks in the sink at most (runner). */
  readonly peakHeld: number;
  /** Live heap (after a full collection) at the end of the burst minus before it, bytes. */
  readonly heapGrowthBytes: number;
  /** Hot updates not processed once the drain ended. */
  readonly hotLost: number;
  /** Other updates not processed once the drain ended. */
  readonly othersLost: number;
  /** From the end of the burst until every update was processed (or the drain gave up), ms. */
  readonly drainMs: number;
  readonly outOfOrderStarts: number;
  readonly overlappingStarts: number;
  readonly duplicateStarts: number;
}

/**
 * The burst as an update stream: arrivals evenly spaced at the total rate, each from the hot
 * principal with its share of that rate, else from one of the others picked uniformly.
 */
export function hotBurstStream(config: HotBurstConfig): UpdateStream {
  const servedPerSecond = 2000 / (config.ioMs[0] + config.ioMs[1]);
  const hotPerSecond = config.hotFactor * servedPerSecond;
  const othersPerSecond = config.others * config.otherPerSecond;
  const perSecond = hotPerSecond + othersPerSecond;
  return makeUpdateStream({
    // One more than the rate × the length: arrivals at both ends, so the last is sent
    // `burstSeconds` after the first (with only rate × length, 1/rate short of it).
    count: Math.round(perSecond * config.burstSeconds) + 1,
    principals: config.others + 1,
    skew: 0,
    groupShare: 0,
    groups: 1,
    arrivalsPerSecond: perSecond,
    ioMs: config.ioMs,
    seed: config.seed,
    hotShare: hotPerSecond / perSecond,
  });
}

/**
 * The intake over a file journal (the headline) and its memory journal, and the runner at equal
 * concurrency. The runner at its default 500 is left to the shorter hot-principal scenario: at
 * either setting its backlog waits in its sink for the hot chat, and a half-minute row of it would
 * cost the bench half a minute to show that again.
 */
/** The headline (the intake over a file journal), then, in the full scope, what it is set against. */
function contenders(concurrency: number, scope: BenchScope): PollerContender[] {
  const headline = intakePoller({
    maxConcurrency: concurrency,
    journal: { name: "FileUpdateJournal", open: temporaryFileJournal },
  });
  if (scope === "headline") return [headline];
  return [headline, intakePoller({ maxConcurrency: concurrency }), runnerPoller({ concurrency })];
}

/** The simulator keeps one message and transcript event per chat, so its own memory stays flat. */
const SIM_RETENTION = { maxMessagesPerChat: 1, maxTranscriptEvents: 1 } as const;

/** The burst starts this long after the run is set up, so the baseline collection is done, ms. */
const SETTLE_MS = 500;

async function runOne(
  stream: UpdateStream,
  contender: PollerContender,
  config: HotBurstConfig,
): Promise<HotBurstRun> {
  const link = await openSimLink(stream, config.latencyMs, SIM_RETENTION);
  try {
    const measuredRoundTripMs = await link.measureRoundTripMs();
    const sentAtMs = new Float64Array(stream.updates.length);
    // Its own I/O, which the end of the burst takes away (see below).
    const played: UpdateStream = { ...stream, arrivalMs: sentAtMs, ioMs: stream.ioMs.slice() };
    const startedAt = performance.now() + SETTLE_MS;
    const recorder = new ReplayRecorder(played, startedAt, { indexOf: simIndexOf });
    const poller = await contender.start(link, recorder.process);
    collectGarbage();
    const heapBefore = process.memoryUsage().heapUsed;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt - performance.now())));
    await sendArrivals(link, stream, startedAt, sentAtMs, new AbortController().signal);
    const burstEndedAt = performance.now();
    collectGarbage();
    const heapGrowthBytes = process.memoryUsage().heapUsed - heapBefore;
    // The burst is over and so is whatever made its processing slow: the rest of the backlog
    // runs without I/O, so it drains in seconds instead of nine times the burst.
    played.ioMs.fill(0);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      recorder.done,
      new Promise((resolve) => {
        timer = setTimeout(resolve, config.drainMs);
      }),
    ]);
    clearTimeout(timer);
    const drainMs = performance.now() - burstEndedAt;
    const trace = recorder.trace();
    const report = await poller.stop();
    const others: number[] = [];
    const hot: number[] = [];
    let hotUpdates = 0;
    let hotLost = 0;
    let othersLost = 0;
    trace.queueingMs.forEach((queueing, index) => {
      const isHot = stream.principalOf[index] === HOT_PRINCIPAL;
      if (isHot) hotUpdates++;
      if (Number.isNaN(queueing)) {
        if (isHot) hotLost++;
        else othersLost++;
      } else {
        (isHot ? hot : others).push(queueing);
      }
    });
    return {
      contender: contender.name,
      settings: contender.settings,
      measuredRoundTripMs,
      updates: stream.updates.length,
      hotUpdates,
      burstSeconds: (burstEndedAt - startedAt) / 1000,
      othersQueueingMs: summarize(others),
      hotQueueingMs: summarize(hot),
      rejected: report.rejected,
      peakHeld: report.peakHeld,
      heapGrowthBytes,
      hotLost,
      othersLost,
      drainMs,
      outOfOrderStarts: trace.outOfOrderStarts,
      overlappingStarts: trace.overlappingStarts,
      duplicateStarts: trace.duplicateStarts,
    };
  } finally {
    await link.close();
  }
}

/** Order violations of a run: out-of-order, overlapping or repeated starts of one principal. */
export function hotBurstViolations(run: HotBurstRun): number {
  return run.outOfOrderStarts + run.overlappingStarts + run.duplicateStarts;
}

function hotBurstTable(
  config: HotBurstConfig,
  stream: UpdateStream,
  runs: HotBurstRun[],
  scope: BenchScope,
): Table {
  const base = runs[0] as HotBurstRun;
  const ms = (value: number): string =>
    value >= 10_000 ? `${formatFixed(value / 1000, 1)} s` : `${formatFixed(value, 1)} ms`;
  const mb = (bytes: number): string => `${formatFixed(bytes / 1_048_576, 1)} MB`;
  const hotRate = (base.hotUpdates / stream.updates.length) * stream.options.arrivalsPerSecond;
  return {
    title: `Dispatch, a long hot burst: ${formatCount(stream.updates.length)} updates over ${config.burstSeconds} s, one private chat sending ${formatCount(hotRate)}/s (${config.hotFactor}× the ${formatCount(2000 / (config.ioMs[0] + config.ioMs[1]))}/s it is served at, I/O ${config.ioMs[0]}–${config.ioMs[1]} ms) while ${formatCount(config.others)} others send ${config.otherPerSecond}/s each, ${roundTripLabel(config.latencyMs, runs)}`,
    columns: [
      { header: "contender", align: "left" },
      ...QUEUEING_COLUMNS,
      { header: "peak held" },
      { header: "heap growth" },
      { header: "hot lost" },
      { header: "others lost" },
      { header: "order violations" },
      { header: "drained in" },
    ],
    rows: runs.map((run) => [
      run.contender,
      ...queueingCells(run, base, ms),
      formatCount(run.peakHeld),
      mb(run.heapGrowthBytes),
      formatCount(run.hotLost),
      formatCount(run.othersLost),
      formatCount(hotBurstViolations(run)),
      ms(run.drainMs),
    ]),
    notes: [
      "queueing = processor start − the moment the user sent it; peak held = the intake's stored-but-unfinished updates (in memory or in its journal), the runner's sink tasks",
      "heap growth = live heap (after a full collection) at the end of the burst minus right before it, the simulator in the same process keeping one message per chat; the runner's backlog waits in the simulator (as at Telegram), so its growth includes the simulator's pending updates",
      `after the burst the processor stops waiting (I/O 0), so the backlog drains in seconds rather than ${config.hotFactor - 1}× the burst; lost = not processed ${formatCount(config.drainMs / 1000)} s after the burst`,
      scope === "full"
        ? "the intake with the memory journal holds its backlog in memory, so its journal bound is 10,000 (maxJournalUpdates' default there): polling pauses there, and everybody waits"
        : `the intake with the memory journal and the grammY runner, ${config.burstSeconds} s each more: pnpm bench:full`,
    ],
  };
}

/** What the scenario produced. */
export interface HotBurstResult {
  readonly table: Table;
  readonly runs: readonly HotBurstRun[];
  /** The headline: the intake over a FileUpdateJournal. */
  readonly headline: HotBurstRun;
}

/**
 * Runs the burst through the intake over a file journal (the headline every summary field reads)
 * and, in the full scope, through the intake over the memory journal and the runner.
 */
export async function runHotBurst(
  config: HotBurstConfig,
  concurrency: number,
  scope: BenchScope = "full",
): Promise<HotBurstResult> {
  const stream = hotBurstStream(config);
  const runs: HotBurstRun[] = [];
  for (const contender of contenders(concurrency, scope)) {
    runs.push(await runOne(stream, contender, config));
  }
  return {
    table: hotBurstTable(config, stream, runs, scope),
    runs,
    headline: runs[0] as HotBurstRun,
  };
}

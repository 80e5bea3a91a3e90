// The scale-out area: one bot run as 1, 2 and 4 processes against the sim, sharing pacing and
// updates through one redis-server (@telepace/redis), next to two peers — grammY's throttler over
// Bottleneck's Redis clustering, and grammY sending through a BullMQ queue under BullMQ's rate
// limiter, their updates delivered by chat as webhooks — at the same process counts; the
// 4-process runs in interleaved rounds, each throughput run measured over the same window, the
// last round's also to their last echo. Then 4 processes that each pace alone (what a bot gets
// without a shared store), a 4-process run with a worker killed mid-load, and a hand-over run at
// the reference bot's lease defaults below Telegram's global limit, where a worker and then the
// poller are killed and the hand-over is timed at the sim. Processes are started once per stack
// and serve run after run.
// The scenario (./cluster) is shared with the end-to-end test, test/scaleout.test.ts.

import { type RedisTestServer, startRedis } from "@telepace/testing";
import type { AreaResult } from "../report.js";
import { type Round, type Rounds, roundSummary, runRounds } from "../rounds.js";
import { ScenarioClock } from "../scenario-clock.js";
import type { BenchScope } from "../scope.js";
import {
  formatCount,
  formatFixed,
  formatRatio,
  formatSpread,
  median,
  ratio,
  spread,
} from "../stats.js";
import type { Table } from "../table.js";
import type { ClusterStack } from "./cluster/cluster.js";
import { ProcessPool } from "./cluster/process-pool.js";
import {
  runScaleout,
  runScaleoutPastWindow,
  type ScaleoutOptions,
  type ScaleoutResult,
} from "./cluster/scenario.js";

/** Sizes of the scale-out runs. */
export interface ScaleoutConfig {
  readonly processCounts: readonly number[];
  /** Rounds of the largest process count, both stacks interleaved (integer >= 1). */
  readonly rounds: number;
  readonly seed: number;
  readonly people: number;
  /** Per person in the throughput runs (every stack, every process count). */
  readonly messagesPerPerson: number;
  /** A throughput run ends this long after its first echo, ms (see `ScaleoutOptions`). */
  readonly windowMs: number;
  /** Per person in the baseline and the worker-kill run. */
  readonly killMessagesPerPerson: number;
  /** When the worker is killed in the kill run, ms after the load starts. */
  readonly killWorkerAfterMs: number;
  /** The hand-over run: every chat paced at Telegram's 1/s, the whole below its 30/s. */
  readonly handover: {
    readonly people: number;
    readonly messagesPerPerson: number;
    readonly killWorkerAfterMs: number;
    readonly killPollerAfterMs: number;
    /** People who write only once the poller is killed. */
    readonly pollerProbes: number;
    /** The sim's added round trip for every call, ms. */
    readonly latencyMs: number;
  };
}

/**
 * The configuration `pnpm bench scaleout` uses: throughput runs offer 180 messages at once (6 s
 * at Telegram's 30/s) and measure the first 3 s of echoes; the kill run 180 to the end; the
 * hand-over run 24 people × 7 messages at 1/s each (24/s), a 50 ms round trip.
 */
export const scaleoutConfig: ScaleoutConfig = {
  processCounts: [1, 2, 4],
  rounds: 5,
  seed: 30,
  people: 60,
  messagesPerPerson: 3,
  windowMs: 3_000,
  killMessagesPerPerson: 3,
  killWorkerAfterMs: 2_000,
  handover: {
    people: 24,
    messagesPerPerson: 7,
    killWorkerAfterMs: 2_000,
    killPollerAfterMs: 4_500,
    pollerProbes: 6,
    latencyMs: 50,
  },
};

/** The per-round figures of the largest process count, as medians with `…Min`/`…Max`. */
type RoundFigure =
  | "sendsPerSecondVsLimit"
  | "sendsPerSecondVsBottleneckCluster"
  | "sendsPerSecondVsBullmq"
  | "roundTripMs";

/** The headline figures (`areas.scaleout.summary`): telepace's unless named after the peer. */
export type ScaleoutSummary = ReturnType<typeof roundSummary<RoundFigure>> & {
  readonly processes: number;
  /**
   * 429s over telepace's shared runs (every round, every process count, to the last echo) and its
   * kill run.
   */
  readonly rateLimited: number;
  /** The most sends the sim got within any 1,000 ms, over the shared runs without a kill. */
  readonly busiestSecondSends: number;
  /** Over telepace's shared runs and its kill run. */
  readonly orderViolations: number;
  /** Messages never echoed after a worker kill (both kill runs). */
  readonly lostAfterWorkerKill: number;
  /** Kill of a worker to no lease of it left, at the bot's lease defaults. */
  readonly handoverMs: number;
  /**
   * Kill of a worker to the next reply at the sim in each chat it held, the longest, at the
   * reference bot's defaults (target <= 2000).
   */
  readonly handoverAtSimMs: number;
  /** Kill of the poller to the sim's reply to people who wrote after it, the longest. */
  readonly pollerHandoverAtSimMs: number;
  /** The throttler peer's runs, every round and process count and to the last echo: 429s, lost, order violations. */
  readonly bottleneckClusterRateLimited: number;
  readonly bottleneckClusterLost: number;
  readonly bottleneckClusterOrderViolations: number;
  /** The most sends the sim got within any 1,000 ms in the peer's runs. */
  readonly bottleneckClusterBusiestSecondSends: number;
  /**
   * telepace's sends/s ÷ each peer's at the largest count in the last round's runs, which go on
   * past their window to the last echo: what a backlog costs past its first seconds.
   */
  readonly toLastEchoVsBottleneckCluster?: number;
  readonly toLastEchoVsBullmq?: number;
  /** The BullMQ peer's runs, every round and process count, as for the throttler peer. */
  readonly bullmqRateLimited: number;
  readonly bullmqLost: number;
  readonly bullmqOrderViolations: number;
  readonly bullmqBusiestSecondSends: number;
};

/** The process counts besides the largest, for a note: "1 and 2". */
function fewerCountsOf(config: ScaleoutConfig, most: number): string {
  const fewer = config.processCounts.filter((count) => count !== most);
  return fewer.length <= 1
    ? fewer.join("")
    : `${fewer.slice(0, -1).join(", ")} and ${fewer.at(-1) as number}`;
}

/** One table row from one run, or from the rounds of one: medians, counts summed. */
function row(label: string, results: readonly ScaleoutResult[]): string[] {
  const first = results[0] as ScaleoutResult;
  const sum = (figure: (result: ScaleoutResult) => number) =>
    formatCount(results.reduce((total, result) => total + figure(result), 0));
  return [
    label,
    String(first.processes),
    String(results.length),
    formatSpread(spread(results.map((result) => result.sendsPerSecondVsLimit)), (value) =>
      formatFixed(value, 3),
    ),
    sum((result) => result.rateLimited),
    formatCount(Math.max(...results.map((result) => result.busiestSecondSends))),
    sum((result) => result.orderViolations),
    sum((result) => result.lost),
    first.waitingAtWindowEnd === undefined ? "–" : sum((result) => result.waitingAtWindowEnd ?? 0),
    sum((result) => result.duplicates),
    first.handoverMs === undefined ? "–" : formatCount(Math.round(first.handoverMs)),
    atSim(first),
  ];
}

/** The hand-over at the sim: the worker's, and the poller's when it was killed too. */
function atSim(result: ScaleoutResult): string {
  const worker = result.handoverAtSimMs;
  if (worker === undefined) return "–";
  const poller = result.pollerHandoverAtSimMs;
  return poller === undefined
    ? formatCount(Math.round(worker))
    : `${formatCount(Math.round(worker))} / ${formatCount(Math.round(poller))}`;
}

const STACKS: readonly { readonly id: ClusterStack }[] = [
  { id: "telepace" },
  { id: "bottleneck" },
  { id: "bullmq" },
];
const LABELS: Readonly<Record<ClusterStack, string>> = {
  telepace: "telepace, shared (RedisPacingStore)",
  bottleneck: "throttler over clustered Bottleneck",
  bullmq: "BullMQ queue, rate limiter 30 per 1 s",
};

/**
 * Runs the area; `redisUrl` (e.g. `REDIS_URL`) or a redis-server from PATH on a free port. The
 * full scope adds the smaller process counts and the last round's runs followed to the last echo.
 */
export async function runScaleoutArea(
  config: ScaleoutConfig = scaleoutConfig,
  scope: BenchScope = "headline",
  redisUrl: string | undefined = process.env.REDIS_URL,
): Promise<AreaResult> {
  const startedAt = performance.now();
  let server: RedisTestServer | undefined;
  if (redisUrl === undefined) server = await startRedis();
  const url = redisUrl ?? (server as RedisTestServer).url;
  const pool = new ProcessPool();
  const clock = new ScenarioClock();
  try {
    const base: Omit<ScaleoutOptions, "processes"> = {
      redisUrl: url,
      people: config.people,
      messagesPerPerson: config.messagesPerPerson,
      pool,
    };
    const most = Math.max(...config.processCounts);
    const throughput = (stack: ClusterStack, processes: number) =>
      runScaleout({ ...base, processes, stack, windowMs: config.windowMs });
    // The largest count in rounds, the stacks interleaved; the last round's runs go on past the
    // window to the last echo (the window leaves out a tail), measured both ways, so the runs to
    // the last echo cost no runs of their own and run in warm processes, as the other rounds'.
    // The smaller counts once each, in round 0's order. Both in the full scope only.
    const isFull = scope === "full";
    const lastRound = isFull ? config.rounds - 1 : -1;
    const toLastEcho = {} as Record<ClusterStack, ScaleoutResult>;
    const rounds: Rounds<ScaleoutResult> = await runRounds(
      STACKS,
      { rounds: config.rounds, seed: config.seed, order: "rotate" },
      (stack, round) =>
        clock.time(round.index === lastRound ? "roundsToLastEcho" : "rounds", async () => {
          if (round.index !== lastRound) return throughput(stack.id, most);
          const { window, toLastEcho: whole } = await runScaleoutPastWindow({
            ...base,
            processes: most,
            stack: stack.id,
            windowMs: config.windowMs,
          });
          toLastEcho[stack.id] = whole;
          return window;
        }),
    );
    const fewer: Record<ClusterStack, ScaleoutResult[]> = {
      telepace: [],
      bottleneck: [],
      bullmq: [],
    };
    const fewerCounts = isFull ? config.processCounts.filter((count) => count !== most) : [];
    for (const processes of fewerCounts) {
      for (const stack of (rounds.rounds[0] as Round).order as ClusterStack[]) {
        fewer[stack].push(await clock.time("fewerProcesses", () => throughput(stack, processes)));
      }
    }
    const alone = await clock.time("alone", () =>
      runScaleout({ ...base, processes: most, windowMs: config.windowMs, sharedPacing: false }),
    );
    const killed = await clock.time("workerKill", () =>
      runScaleout({
        ...base,
        messagesPerPerson: config.killMessagesPerPerson,
        processes: most,
        killWorkerAfterMs: config.killWorkerAfterMs,
      }),
    );
    const handover = await clock.time("handover", () =>
      runScaleout({ redisUrl: url, processes: most, ...config.handover, afterPollerKill: 1, pool }),
    );
    // Every run of a stack once, for counts: the last round's whole run in place of its window.
    const runsOf = (stack: ClusterStack) => [
      ...fewer[stack],
      ...rounds
        .of(stack)
        .map((result, index) => (index === lastRound ? toLastEcho[stack] : result)),
    ];
    const ours = runsOf("telepace");
    const total = (results: readonly ScaleoutResult[], figure: (r: ScaleoutResult) => number) =>
      results.reduce((sum, result) => sum + figure(result), 0);
    const vs = (peer: ClusterStack) =>
      rounds.perRound((result) =>
        ratio(result("telepace").sendsPerSecondVsLimit, result(peer).sendsPerSecondVsLimit),
      );
    const peerFigures = (peer: ClusterStack) => {
      const runs = runsOf(peer);
      return {
        rateLimited: total(runs, (result) => result.rateLimited),
        lost: total(runs, (result) => result.lost),
        orderViolations: total(runs, (result) => result.orderViolations),
        busiestSecondSends: Math.max(...runs.map((result) => result.busiestSecondSends)),
      };
    };
    const vsBottleneck = vs("bottleneck");
    const vsBullmq = vs("bullmq");
    const bottleneck = peerFigures("bottleneck");
    const bullmq = peerFigures("bullmq");
    const summary: ScaleoutSummary = {
      processes: most,
      ...roundSummary<RoundFigure>(config.rounds, {
        sendsPerSecondVsLimit: rounds.perRound(
          (result) => result("telepace").sendsPerSecondVsLimit,
        ),
        sendsPerSecondVsBottleneckCluster: vsBottleneck,
        sendsPerSecondVsBullmq: vsBullmq,
        roundTripMs: rounds.perRound((result) =>
          median(STACKS.map(({ id }) => result(id).roundTripMs)),
        ),
      }),
      ...(isFull && {
        toLastEchoVsBottleneckCluster: ratio(
          toLastEcho.telepace.sendsPerSecondVsLimit,
          toLastEcho.bottleneck.sendsPerSecondVsLimit,
        ),
        toLastEchoVsBullmq: ratio(
          toLastEcho.telepace.sendsPerSecondVsLimit,
          toLastEcho.bullmq.sendsPerSecondVsLimit,
        ),
      }),
      rateLimited: total([...ours, killed], (result) => result.rateLimited),
      busiestSecondSends: Math.max(...ours.map((result) => result.busiestSecondSends)),
      orderViolations: total([...ours, killed], (result) => result.orderViolations),
      lostAfterWorkerKill: killed.lost + handover.lost,
      handoverMs: handover.handoverMs ?? Number.NaN,
      handoverAtSimMs: handover.handoverAtSimMs ?? Number.NaN,
      pollerHandoverAtSimMs: handover.pollerHandoverAtSimMs ?? Number.NaN,
      bottleneckClusterRateLimited: bottleneck.rateLimited,
      bottleneckClusterLost: bottleneck.lost,
      bottleneckClusterOrderViolations: bottleneck.orderViolations,
      bottleneckClusterBusiestSecondSends: bottleneck.busiestSecondSends,
      bullmqRateLimited: bullmq.rateLimited,
      bullmqLost: bullmq.lost,
      bullmqOrderViolations: bullmq.orderViolations,
      bullmqBusiestSecondSends: bullmq.busiestSecondSends,
    };
    const roundTrips = spread(
      [...STACKS.flatMap(({ id }) => runsOf(id)), alone, killed].map((r) => r.roundTripMs),
    );
    const table: Table = {
      title: "Scale-out: one bot, N processes, one Redis (Telegram's limit: 30 sends/s)",
      columns: [
        { header: "run", align: "left" },
        { header: "processes" },
        { header: "runs" },
        { header: "sends/s ÷ 30" },
        { header: "429s" },
        { header: "most in 1 s" },
        { header: "order violations" },
        { header: "lost" },
        { header: "waiting at end" },
        { header: "duplicates" },
        { header: "leases moved ms" },
        { header: "at the sim ms" },
      ],
      rows: [
        ...[...fewerCounts, most].flatMap((processes) =>
          STACKS.map(({ id }) =>
            row(
              LABELS[id],
              processes === most
                ? rounds.of(id)
                : fewer[id].filter((r) => r.processes === processes),
            ),
          ),
        ),
        ...(isFull
          ? STACKS.map(({ id }) => row(`${LABELS[id]}, to the last echo`, [toLastEcho[id]]))
          : []),
        row("each paces alone (naive baseline)", [alone]),
        row("telepace, shared, worker kill -9", [killed]),
        row("telepace, hand-over: worker, then poller kill -9", [handover]),
      ],
      notes: [
        `Throughput runs: ${config.people} people × ${config.messagesPerPerson} messages at once, each echoed; ${isFull ? `${config.processCounts.join(", ")} processes, ${most} in ${config.rounds} rounds (the stacks take turns going first), fewer once each` : `${most} processes in ${config.rounds} rounds (the stacks take turns going first; ${fewerCountsOf(config, most)} processes and the runs to the last echo: pnpm bench:full)`}; each run measured over the ${formatFixed(config.windowMs / 1000, 0)} s after its first echo (sends in it ÷ (window + 1 s) ÷ 30), median (min–max) over the runs; counts summed. Lost there: sends the bot gave up on; waiting: neither echoed nor given up on when the window closed.`,
        `telepace's sends/s ÷ each peer's at ${most} processes (median of the per-round ratios): throttler over clustered Bottleneck ${formatSpread(spread(vsBottleneck), formatRatio)}, BullMQ ${formatSpread(spread(vsBullmq), formatRatio)}${isFull ? `; to the last echo (the last round's runs, followed past the window): ${formatRatio(summary.toLastEchoVsBottleneckCluster ?? Number.NaN)} and ${formatRatio(summary.toLastEchoVsBullmq ?? Number.NaN)}` : ""}.`,
        "The throttler peer: @grammyjs/transformer-throttler with its default limiters, each given Bottleneck's Redis clustering (one id per run), then @grammyjs/auto-retry, its handler sequentialized by chat. The BullMQ peer: each echo a job of one queue per run, sent by a Worker in every process (concurrency 1, its default) under the Workers' shared limiter { max: 30, duration: 1000 }; a 429 rate-limits the queue for its retry_after and puts the job back. Both peers' updates come as webhooks behind a load balancer that routes by chat (the bench delivers them, at no cost to the peers); telepace's runs include its elected poller and shared queue.",
        `Round trip as run: ${formatSpread(roundTrips, (value) => `${formatFixed(value, 1)} ms`)} (each process times 5 getMe through its own client at start; median over processes, median (min–max) over the runs but the hand-over's, which adds ${config.handover.latencyMs} ms); one redis-server on loopback for every run.`,
        `The naive baseline: the throughput run with pacing per process (its updates are shared too, so per-person order holds). The kill run: ${config.people} people × ${config.killMessagesPerPerson} messages, a worker killed ${formatFixed(config.killWorkerAfterMs / 1000, 0)} s in, to the last echo.`,
        "Kill runs use the reference bot's defaults: worker lease 1.5 s renewed every 0.3 s, poller lease 1.5 s.",
        "Leases moved: kill -9 to no lease of the dead worker left; duplicates are updates it had started (at least once).",
        `At the sim: kill -9 to the next reply in each chat the dead worker held, the longest / kill -9 of the poller to the reply to ${config.handover.pollerProbes} people who wrote after it (${config.handover.people} people × ${config.handover.messagesPerPerson} messages at 1/s each, a ${config.handover.latencyMs} ms round trip).`,
        "Most in 1 s: the most sends the sim received within any 1,000 ms (its receive time, on the bench's event loop); the sim's own limit is a token bucket (30/s, burst 30), which admits more than 30 in a sliding second.",
      ],
    };
    return {
      area: "scaleout",
      tables: [table],
      figures: {
        config,
        summary,
        rounds,
        fewer,
        toLastEcho,
        alone,
        killed,
        handover,
        // Each part's wall time, its runs' set-up included; processStarts is part of them.
        scenarioDurationsMs: {
          ...clock.durationsMs(),
          processStarts: pool.snapshot().startingMs,
        },
        processesStarted: pool.snapshot().started,
      },
      durationMs: performance.now() - startedAt,
    };
  } finally {
    await pool.close();
    await server?.stop();
  }
}

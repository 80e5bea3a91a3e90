// The scale-out area: one bot run as 1, 2 and 4 processes against the sim, sharing pacing and
// updates through one redis-server (@telepace/redis), next to 4 processes that each pace alone
// (what a bot gets without a shared store), a 4-process run with a worker killed mid-load, and a
// hand-over run at the reference bot's lease defaults below Telegram's global limit, where a
// worker and then the poller are killed and the hand-over is timed at the sim.
// The scenario (./cluster) is shared with the end-to-end test, test/scaleout.test.ts.

import { type RedisTestServer, startRedis } from "@telepace/testing";
import type { AreaResult } from "../report.js";
import { formatCount, formatFixed } from "../stats.js";
import type { Table } from "../table.js";
import { runScaleout, type ScaleoutOptions, type ScaleoutResult } from "./cluster/scenario.js";

/** Sizes of the scale-out runs. */
export interface ScaleoutConfig {
  readonly processCounts: readonly number[];
  readonly people: number;
  readonly messagesPerPerson: number;
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
 * The configuration `pnpm bench scaleout` uses: 360 messages, 12 s at Telegram's 30/s; the
 * hand-over run 24 people × 10 messages at 1/s each (24/s), a 50 ms round trip.
 */
export const scaleoutConfig: ScaleoutConfig = {
  processCounts: [1, 2, 4],
  people: 60,
  messagesPerPerson: 6,
  killWorkerAfterMs: 3_000,
  handover: {
    people: 24,
    messagesPerPerson: 10,
    killWorkerAfterMs: 3_000,
    killPollerAfterMs: 6_500,
    pollerProbes: 6,
    latencyMs: 50,
  },
};

/** The headline figures the issue names (`areas.scaleout.summary`). */
export interface ScaleoutSummary {
  readonly processes: number;
  readonly sendsPerSecondVsLimit: number;
  readonly rateLimited: number;
  /** The most sends the sim got within any 1,000 ms, over the shared runs without a kill. */
  readonly busiestSecondSends: number;
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
}

function row(label: string, result: ScaleoutResult): string[] {
  return [
    label,
    String(result.processes),
    formatCount(result.sent),
    formatFixed(result.sendsPerSecondVsLimit, 3),
    formatCount(result.rateLimited),
    formatCount(result.busiestSecondSends),
    formatCount(result.orderViolations),
    formatCount(result.lost),
    formatCount(result.duplicates),
    result.handoverMs === undefined ? "–" : formatCount(Math.round(result.handoverMs)),
    atSim(result),
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

/** Runs the area; `redisUrl` (e.g. `REDIS_URL`) or a redis-server from PATH on a free port. */
export async function runScaleoutArea(
  config: ScaleoutConfig = scaleoutConfig,
  redisUrl: string | undefined = process.env.REDIS_URL,
): Promise<AreaResult> {
  const startedAt = performance.now();
  let server: RedisTestServer | undefined;
  if (redisUrl === undefined) server = await startRedis();
  const url = redisUrl ?? (server as RedisTestServer).url;
  try {
    const base: Omit<ScaleoutOptions, "processes"> = {
      redisUrl: url,
      people: config.people,
      messagesPerPerson: config.messagesPerPerson,
    };
    const shared: ScaleoutResult[] = [];
    for (const processes of config.processCounts) {
      shared.push(await runScaleout({ ...base, processes }));
    }
    const most = Math.max(...config.processCounts);
    const alone = await runScaleout({ ...base, processes: most, sharedPacing: false });
    const killed = await runScaleout({
      ...base,
      processes: most,
      killWorkerAfterMs: config.killWorkerAfterMs,
    });
    const handover = await runScaleout({
      redisUrl: url,
      processes: most,
      ...config.handover,
      afterPollerKill: 1,
    });
    const atMost = shared[shared.length - 1] as ScaleoutResult;
    const summary: ScaleoutSummary = {
      processes: most,
      sendsPerSecondVsLimit: atMost.sendsPerSecondVsLimit,
      rateLimited: atMost.rateLimited + killed.rateLimited,
      busiestSecondSends: Math.max(...shared.map((result) => result.busiestSecondSends)),
      orderViolations: atMost.orderViolations + killed.orderViolations,
      lostAfterWorkerKill: killed.lost + handover.lost,
      handoverMs: handover.handoverMs ?? Number.NaN,
      handoverAtSimMs: handover.handoverAtSimMs ?? Number.NaN,
      pollerHandoverAtSimMs: handover.pollerHandoverAtSimMs ?? Number.NaN,
    };
    const table: Table = {
      title: "Scale-out: one bot, N processes, one Redis (Telegram's limit: 30 sends/s)",
      columns: [
        { header: "run", align: "left" },
        { header: "processes" },
        { header: "sends" },
        { header: "sends/s ÷ 30" },
        { header: "429s" },
        { header: "most in 1 s" },
        { header: "order violations" },
        { header: "lost" },
        { header: "duplicates" },
        { header: "leases moved ms" },
        { header: "at the sim ms" },
      ],
      rows: [
        ...shared.map((result) => row("shared (RedisPacingStore)", result)),
        row("each paces alone (baseline)", alone),
        row("shared, worker kill -9", killed),
        row("hand-over: worker, then poller kill -9", handover),
      ],
      notes: [
        `${config.people} people × ${config.messagesPerPerson} messages, each echoed; sends/s from the first echo to the last.`,
        "Kill runs use the reference bot's defaults: worker lease 1.5 s renewed every 0.3 s, poller lease 1.5 s.",
        "Leases moved: kill -9 to no lease of the dead worker left; duplicates are updates it had started (at least once).",
        `At the sim: kill -9 to the next reply in each chat the dead worker held, the longest / kill -9 of the poller to the reply to ${config.handover.pollerProbes} people who wrote after it (${config.handover.people} people × ${config.handover.messagesPerPerson} messages at 1/s each, a ${config.handover.latencyMs} ms round trip).`,
        "The baseline's updates are shared too (per-person order holds), only pacing is per process.",
        "Most in 1 s: the most sends the sim received within any 1,000 ms; above 30, a strictly sliding window (stricter than the sim's token bucket) would have refused one.",
      ],
    };
    return {
      area: "scaleout",
      tables: [table],
      figures: { config, summary, shared, alone, killed, handover },
      durationMs: performance.now() - startedAt,
    };
  } finally {
    await server?.stop();
  }
}

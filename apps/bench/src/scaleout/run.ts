// The scale-out area: one bot run as 1, 2 and 4 processes against the sim, sharing pacing and
// updates through one redis-server (@telepace/redis), next to 4 processes that each pace alone
// (what a bot gets without a shared store), and a 4-process run with a worker killed mid-load.
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
  readonly leaseMs: number;
  /** When the worker is killed in the kill run, ms after the load starts. */
  readonly killWorkerAfterMs: number;
}

/** The configuration `pnpm bench scaleout` uses: 360 messages, 12 s at Telegram's 30/s. */
export const scaleoutConfig: ScaleoutConfig = {
  processCounts: [1, 2, 4],
  people: 60,
  messagesPerPerson: 6,
  leaseMs: 1_000,
  killWorkerAfterMs: 3_000,
};

/** The headline figures the issue names (`areas.scaleout.summary`). */
export interface ScaleoutSummary {
  readonly processes: number;
  readonly sendsPerSecondVsLimit: number;
  readonly rateLimited: number;
  /** The most sends the sim got within any 1,000 ms, over the shared runs without a kill. */
  readonly busiestSecondSends: number;
  readonly orderViolations: number;
  readonly lostAfterWorkerKill: number;
  readonly handoverMs: number;
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
  ];
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
      leaseMs: config.leaseMs,
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
    const atMost = shared[shared.length - 1] as ScaleoutResult;
    const summary: ScaleoutSummary = {
      processes: most,
      sendsPerSecondVsLimit: atMost.sendsPerSecondVsLimit,
      rateLimited: atMost.rateLimited + killed.rateLimited,
      busiestSecondSends: Math.max(...shared.map((result) => result.busiestSecondSends)),
      orderViolations: atMost.orderViolations + killed.orderViolations,
      lostAfterWorkerKill: killed.lost,
      handoverMs: killed.handoverMs ?? Number.NaN,
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
        { header: "handover ms" },
      ],
      rows: [
        ...shared.map((result) => row("shared (RedisPacingStore)", result)),
        row("each paces alone (baseline)", alone),
        row("shared, worker kill -9", killed),
      ],
      notes: [
        `${config.people} people × ${config.messagesPerPerson} messages, each echoed; sends/s from the first echo to the last.`,
        `Handover: kill -9 to no lease of the dead worker left (lease ${config.leaseMs} ms); duplicates are updates it had started (at least once).`,
        "The baseline's updates are shared too (per-person order holds), only pacing is per process.",
        "Most in 1 s: the most sends the sim received within any 1,000 ms; above 30, a strictly sliding window (stricter than the sim's token bucket) would have refused one.",
      ],
    };
    return {
      area: "scaleout",
      tables: [table],
      figures: { config, summary, shared, alone, killed },
      durationMs: performance.now() - startedAt,
    };
  } finally {
    await server?.stop();
  }
}

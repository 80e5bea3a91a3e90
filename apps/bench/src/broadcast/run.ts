// The broadcast comparison: one message to 10 000 people through a fresh sim per contender, free
// (30/s, time-scaled) while 20 others chat with the bot, and paid (1000/s, on a bot with paid
// broadcasts) — telepace against the grammY loop a bot author writes — then telepace alone across
// kill -9: one process on a file journal, and three sharing the broadcast over Redis.

import type { AreaResult } from "../report.js";
import { formatCount, formatFixed, formatRatio, ratio, summarize } from "../stats.js";
import type { Table } from "../table.js";
import {
  type BroadcastTarget,
  type Contender,
  type ContenderRun,
  grammyLoop,
  telepaceContender,
} from "./contenders.js";
import { type CrashRun, runCrash } from "./crash.js";
import { openSim } from "./sim-link.js";

/** Sizes and timing of the broadcast comparison. */
export interface BroadcastConfig {
  /** Recipients of the free and the paid broadcast. */
  readonly recipients: number;
  /** How many times faster than real time the free broadcast's sim (and telepace's clock) run. */
  readonly freeScale: number;
  /** People chatting with the bot during a second free broadcast, to the first `chatRecipients`. */
  readonly chatters: number;
  readonly chatRecipients: number;
  /** Recipients of the paid broadcast that the bot may not send paid (the fallback). */
  readonly refusedRecipients: number;
  /** Recipients of the crash runs (paid, real time). */
  readonly crashRecipients: number;
  /** Processes of the Redis crash run. */
  readonly processes: number;
  readonly seed: number;
}

/** The full-size configuration `pnpm bench:broadcast` uses (TELEPACE_BROADCAST_RECIPIENTS shrinks it). */
export function broadcastConfig(): BroadcastConfig {
  const recipients = Number(process.env.TELEPACE_BROADCAST_RECIPIENTS ?? 10_000);
  return {
    recipients,
    freeScale: 5,
    chatters: 20,
    chatRecipients: Math.min(3_000, recipients),
    refusedRecipients: Math.min(600, recipients),
    crashRecipients: Math.min(3_000, recipients),
    processes: 3,
    seed: 28,
  };
}

const CONTENDERS: readonly Contender[] = [telepaceContender, grammyLoop(false), grammyLoop(true)];

/** One contender's broadcast and what the sim saw of it. */
export interface BroadcastRun extends ContenderRun {
  readonly contender: string;
  readonly settings: Readonly<Record<string, string | number>>;
  readonly paid: boolean;
  readonly paidBroadcastsEnabled: boolean;
  readonly recipients: number;
  readonly scale: number;
  /** elapsed ÷ recipients at the documented pace (30/s free, 1000/s paid). */
  readonly vsIdeal: number;
  readonly tooManyRequests: number;
  readonly missed: number;
  readonly duplicates: number;
  /** Telegram ms from a chatter's message to the bot's reply, p50 and p99 (NaN without chatters). */
  readonly replyP50Ms: number;
  readonly replyP99Ms: number;
  readonly unanswered: number;
  readonly stars: number;
  readonly realDurationMs: number;
}

async function runOne(
  contender: Contender,
  options: {
    readonly recipients: number;
    readonly scale: number;
    readonly paid: boolean;
    readonly paidBroadcasts: boolean;
    readonly chatters: number;
    readonly seed: number;
  },
): Promise<BroadcastRun> {
  const started = performance.now();
  const sim = await openSim({
    recipients: options.recipients,
    chatters: options.chatters,
    timeScale: options.scale,
    paidBroadcasts: options.paidBroadcasts,
    seed: options.seed,
  });
  try {
    const target: BroadcastTarget = {
      apiRoot: sim.apiRoot,
      token: sim.token,
      recipients: sim.recipients,
      scale: options.scale,
      paid: options.paid,
    };
    if (options.chatters > 0) sim.chat();
    const run = await contender.run(target);
    sim.stopChat();
    const report = await sim.report();
    const latencies = report.replyLatencyMs.filter(Number.isFinite).map((ms) => ms * options.scale);
    const replies = summarize(latencies);
    const rate = options.paid && options.paidBroadcasts ? 1000 : 30;
    return {
      ...run,
      contender: contender.name,
      settings: contender.settings,
      paid: options.paid,
      paidBroadcastsEnabled: options.paidBroadcasts,
      recipients: options.recipients,
      scale: options.scale,
      vsIdeal: ratio(run.elapsedMs, (options.recipients / rate) * 1000),
      tooManyRequests: report.tooManyRequests,
      missed: report.messagesPerRecipient.filter((count) => count === 0).length,
      duplicates: report.messagesPerRecipient.filter((count) => count > 1).length,
      replyP50Ms: replies.p50,
      replyP99Ms: replies.p99,
      unanswered: report.replyLatencyMs.length - latencies.length,
      stars: report.paidBroadcastStars,
      realDurationMs: performance.now() - started,
    };
  } finally {
    await sim.close();
  }
}

const seconds = (ms: number) => `${formatFixed(ms / 1000, 1)} s`;

function comparisonTable(title: string, runs: readonly BroadcastRun[], notes: string[]): Table {
  const base = runs[0] as BroadcastRun;
  return {
    title,
    columns: [
      { header: "contender", align: "left" },
      { header: "time to reach all" },
      { header: "÷ ideal" },
      { header: "429s" },
      { header: "missed" },
      { header: "twice" },
      { header: "others' reply p50" },
      { header: "p99" },
      { header: "Stars" },
    ],
    rows: runs.map((run, index) => [
      run.contender,
      index === 0 ? seconds(run.elapsedMs) : formatRatio(ratio(run.elapsedMs, base.elapsedMs)),
      formatFixed(run.vsIdeal, 3),
      formatCount(run.tooManyRequests),
      formatCount(run.missed),
      formatCount(run.duplicates),
      Number.isFinite(run.replyP50Ms)
        ? index === 0
          ? `${formatCount(run.replyP50Ms)} ms`
          : formatRatio(ratio(run.replyP50Ms, base.replyP50Ms))
        : "—",
      Number.isFinite(run.replyP99Ms)
        ? index === 0
          ? `${formatCount(run.replyP99Ms)} ms`
          : formatRatio(ratio(run.replyP99Ms, base.replyP99Ms))
        : "—",
      run.paid ? formatFixed(run.stars, 1) : "—",
    ]),
    notes: [
      "Times in Telegram time; other rows' time and reply latency are ÷ the telepace row.",
      "÷ ideal: time to reach everyone ÷ recipients at the documented pace (30/s, paid 1000/s).",
      ...notes,
    ],
  };
}

function crashTable(file: CrashRun, redis: CrashRun): Table {
  return {
    title: "Broadcast across kill -9 (paid, real time; telepace)",
    columns: [
      { header: "run", align: "left" },
      { header: "recipients" },
      { header: "sent at the kill" },
      { header: "in flight at the kill" },
      { header: "sent again" },
      { header: "missed" },
      { header: "twice" },
      { header: "twice, not reported" },
      { header: "429s" },
    ],
    rows: [
      [`1 process, file journal, restarted`, file, file.inFlightAtKill],
      [`${redis.processes} processes on Redis, 1 killed`, redis, redis.inFlightAtKill],
    ].map(([name, run]) => {
      const crash = run as CrashRun;
      return [
        name as string,
        formatCount(crash.recipients),
        formatCount(crash.sentAtKill),
        formatCount(crash.inFlightAtKill),
        formatCount(crash.resent),
        formatCount(crash.missed),
        formatCount(crash.duplicates),
        formatCount(crash.duplicatesBeyondInFlight),
        formatCount(crash.tooManyRequests),
      ];
    }),
    notes: [
      "In flight at the kill: positions the store held as started with no outcome (Redis: those a",
      "taker found so and sent again). Twice, not reported: recipients with two messages that no",
      "process reported as sent again after a crash (the target is 0).",
    ],
  };
}

/** Runs every scenario and returns the tables and the figures. */
export async function runBroadcast(
  config: BroadcastConfig = broadcastConfig(),
): Promise<AreaResult> {
  const started = performance.now();
  const free: BroadcastRun[] = [];
  const chatting: BroadcastRun[] = [];
  for (const contender of CONTENDERS) {
    const options = {
      scale: config.freeScale,
      paid: false,
      paidBroadcasts: false,
      seed: config.seed,
    };
    free.push(await runOne(contender, { ...options, recipients: config.recipients, chatters: 0 }));
    chatting.push(
      await runOne(contender, {
        ...options,
        recipients: config.chatRecipients,
        chatters: config.chatters,
      }),
    );
  }
  const paid: BroadcastRun[] = [];
  for (const contender of CONTENDERS) {
    paid.push(
      await runOne(contender, {
        recipients: config.recipients,
        scale: 1,
        paid: true,
        paidBroadcasts: true,
        chatters: 0,
        seed: config.seed,
      }),
    );
  }
  const refused = await runOne(telepaceContender, {
    recipients: config.refusedRecipients,
    scale: config.freeScale,
    paid: true,
    paidBroadcasts: false,
    chatters: 0,
    seed: config.seed,
  });
  const fileCrash = await runCrash("file", config.crashRecipients, 1);
  const redisCrash = await runCrash("redis", config.crashRecipients, config.processes);
  const telepaceFree = free[0] as BroadcastRun;
  const telepaceChatting = chatting[0] as BroadcastRun;
  const telepacePaid = paid[0] as BroadcastRun;
  const summary = {
    recipients: config.recipients,
    freeVsIdeal: telepaceFree.vsIdeal,
    paidVsIdeal: telepacePaid.vsIdeal,
    rateLimited:
      telepaceFree.tooManyRequests +
      telepaceChatting.tooManyRequests +
      telepacePaid.tooManyRequests,
    duplicatesBeyondInFlight: fileCrash.duplicatesBeyondInFlight,
    missedAfterKill: fileCrash.missed,
    processes: redisCrash.processes,
    missedAfterProcessKill: redisCrash.missed,
    othersReplyP99MsDuringBroadcast: telepaceChatting.replyP99Ms,
  };
  const tables: Table[] = [
    comparisonTable(
      `Free broadcast to ${formatCount(config.recipients)} people (×${config.freeScale})`,
      free,
      ["Twice: recipients with more than one message; missed: with none."],
    ),
    comparisonTable(
      `Free broadcast to ${formatCount(config.chatRecipients)} people while ${config.chatters} others chat (×${config.freeScale})`,
      chatting,
      [
        `Each chatter writes every 2–6 s; the bot answers "pong" through the same client, so the`,
        "replies (about 5 a second) take their share of the 30/s and the broadcast the rest.",
      ],
    ),
    comparisonTable(
      `Paid broadcast to ${formatCount(config.recipients)} people (allow_paid_broadcast, ×1)`,
      paid,
      [
        "The sim has paid broadcasts on: 1000/s, 0.1 Stars per message beyond 30 in its second.",
        "The throttler's global reservoir is raised to 1000/s for the loops (equal settings).",
      ],
    ),
    {
      title: `Paid broadcast on a bot without paid broadcasts (${formatCount(config.refusedRecipients)} people, ×${config.freeScale}; telepace)`,
      columns: [
        { header: "mode at the end", align: "left" },
        { header: "time to reach all" },
        { header: "÷ ideal at 30/s" },
        { header: "429s" },
        { header: "missed" },
        { header: "twice" },
      ],
      rows: [
        [
          refused.mode,
          seconds(refused.elapsedMs),
          formatFixed(refused.vsIdeal, 3),
          formatCount(refused.tooManyRequests),
          formatCount(refused.missed),
          formatCount(refused.duplicates),
        ],
      ],
      notes: ["The first 429 on a paid send is the refusal: the rest goes at the free pace."],
    },
    crashTable(fileCrash, redisCrash),
  ];
  return {
    area: "broadcast",
    tables,
    figures: { config, summary, free, chatting, paid, refused, fileCrash, redisCrash },
    durationMs: performance.now() - started,
  };
}

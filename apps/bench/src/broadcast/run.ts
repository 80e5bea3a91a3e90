// The broadcast comparison: one message to many people through a fresh sim per run, free (30/s,
// time-scaled) and paid (1000/s, on a bot with paid broadcasts) — telepace against the grammY loop
// a bot author writes, in interleaved rounds — a headline telepace run of each at full size, a
// free broadcast while 20 others chat, and telepace alone across kill -9 (a file journal, Redis).

import type { AreaResult } from "../report.js";
import { type Round, roundSummary, runRounds } from "../rounds.js";
import { ratio, summarize } from "../stats.js";
import {
  type BroadcastTarget,
  type Contender,
  type ContenderRun,
  grammyLoop,
  telepaceContender,
} from "./contenders.js";
import { runCrash } from "./crash.js";
import { openSim } from "./sim-link.js";
import { broadcastTables } from "./tables.js";
import { analyseTiming, RequestLog, type RunTiming } from "./timing.js";

/** Sizes and timing of the broadcast comparison. */
export interface BroadcastConfig {
  /** Recipients of the headline free and paid telepace runs. */
  readonly recipients: number;
  /** Recipients of each round's free and paid run (every contender). */
  readonly roundFreeRecipients: number;
  readonly roundPaidRecipients: number;
  readonly rounds: number;
  /**
   * A run still going at this multiple of recipients ÷ the documented pace is stopped (every
   * contender alike).
   */
  readonly deadlineVsIdeal: number;
  /** How many times faster than real time the free broadcasts' sim (and telepace's clock) run. */
  readonly freeScale: number;
  /** People chatting with the bot during a free broadcast to `chatRecipients`. */
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

/** The configuration `pnpm bench:broadcast` uses (TELEPACE_BROADCAST_RECIPIENTS shrinks it). */
export function broadcastConfig(): BroadcastConfig {
  const recipients = Number(process.env.TELEPACE_BROADCAST_RECIPIENTS ?? 10_000);
  return {
    recipients,
    roundFreeRecipients: Math.min(300, recipients),
    roundPaidRecipients: Math.min(2_000, recipients),
    rounds: 5,
    deadlineVsIdeal: 1.5,
    freeScale: 5,
    chatters: 20,
    chatRecipients: Math.min(600, recipients),
    refusedRecipients: Math.min(300, recipients),
    crashRecipients: Math.min(2_000, recipients),
    processes: 3,
    seed: 28,
  };
}

/** Telegram's pace and burst: 30/s after 30 at once; paid 1000/s after 1000 at once. */
const FREE = { perSecond: 30, burst: 30 } as const;
const PAID = { perSecond: 1000, burst: 1000 } as const;
/** The outbox's `pacingMarginMs` default: the most its global second widens. */
const MARGIN_CAP_MS = 100;

/**
 * The fastest any sender reaches `recipients` under the limits: the burst at once, the rest at
 * the pace (the last message of a free 10 000 at (10 000 − 30)/30 s).
 */
export function idealMs(recipients: number, pace: { perSecond: number; burst: number }): number {
  return (Math.max(0, recipients - pace.burst) / pace.perSecond) * 1000;
}

const CONTENDERS = [telepaceContender, grammyLoop(false), grammyLoop(true)].map((contender) => ({
  ...contender,
  id: contender.name,
}));

/** One contender's broadcast and what the sim saw of it. */
export interface BroadcastRun extends ContenderRun {
  readonly contender: string;
  readonly settings: Readonly<Record<string, string | number>>;
  readonly paid: boolean;
  readonly paidBroadcastsEnabled: boolean;
  readonly recipients: number;
  readonly scale: number;
  readonly deadlineMs: number;
  /**
   * elapsed ÷ the ideal. A run cut at the deadline: the documented pace ÷ its pace over what it
   * settled, a lower bound of its full run (its first seconds had the burst).
   */
  readonly vsIdeal: number;
  /** elapsed ÷ recipients at the documented pace, without the burst (how it was first defined). */
  readonly vsNominal: number;
  readonly tooManyRequests: number;
  readonly missed: number;
  readonly duplicates: number;
  /** Telegram ms from a chatter's message to the bot's reply, p50 and p99 (NaN without chatters). */
  readonly replyP50Ms: number;
  readonly replyP99Ms: number;
  readonly unanswered: number;
  readonly stars: number;
  readonly timing: RunTiming;
  readonly realDurationMs: number;
}

interface RunOptions {
  readonly recipients: number;
  readonly scale: number;
  readonly paid: boolean;
  readonly paidBroadcasts: boolean;
  readonly chatters: number;
  readonly seed: number;
  readonly deadlineVsIdeal: number;
}

async function runOne(contender: Contender, options: RunOptions): Promise<BroadcastRun> {
  const started = performance.now();
  const sim = await openSim({
    recipients: options.recipients,
    chatters: options.chatters,
    timeScale: options.scale,
    paidBroadcasts: options.paidBroadcasts,
    seed: options.seed,
  });
  try {
    const pace = options.paid && options.paidBroadcasts ? PAID : FREE;
    const ideal = idealMs(options.recipients, pace);
    // Against recipients at the pace without the burst: a small paid run's ideal is mostly the
    // burst, and a sender's first moments (opening its journal, claiming a batch) would decide it.
    const deadlineMs = options.deadlineVsIdeal * (options.recipients / pace.perSecond) * 1000;
    const log = new RequestLog();
    const target: BroadcastTarget = {
      apiRoot: sim.apiRoot,
      token: sim.token,
      recipients: sim.recipients,
      scale: options.scale,
      paid: options.paid,
      deadlineMs,
      log,
    };
    if (options.chatters > 0) sim.chat();
    const run = await contender.run(target);
    sim.stopChat();
    const report = await sim.report();
    const latencies = report.replyLatencyMs.filter(Number.isFinite).map((ms) => ms * options.scale);
    const replies = summarize(latencies);
    const recipients = new Set(sim.recipients);
    const requests = log.requests.filter((request) => recipients.has(request.chatId));
    return {
      ...run,
      contender: contender.name,
      settings: contender.settings,
      paid: options.paid,
      paidBroadcastsEnabled: options.paidBroadcasts,
      recipients: options.recipients,
      scale: options.scale,
      deadlineMs,
      vsIdeal: run.cut
        ? ratio(run.elapsedMs / run.settled, 1000 / pace.perSecond)
        : ratio(run.elapsedMs, ideal),
      vsNominal: ratio(run.elapsedMs, (options.recipients / pace.perSecond) * 1000),
      tooManyRequests: report.tooManyRequests,
      missed: report.messagesPerRecipient.filter((count) => count === 0).length,
      duplicates: report.messagesPerRecipient.filter((count) => count > 1).length,
      replyP50Ms: replies.p50,
      replyP99Ms: replies.p99,
      unanswered: report.replyLatencyMs.length - latencies.length,
      stars: report.paidBroadcastStars,
      timing: analyseTiming(requests, report.timing, options.scale, MARGIN_CAP_MS, pace.burst),
      realDurationMs: performance.now() - started,
    };
  } finally {
    await sim.close();
  }
}

/** Runs every scenario and returns the tables and the figures. */
export async function runBroadcast(
  config: BroadcastConfig = broadcastConfig(),
): Promise<AreaResult> {
  const started = performance.now();
  const at = (recipients: number, scale: number, paid: boolean, seed: number): RunOptions => ({
    recipients,
    scale,
    paid,
    paidBroadcasts: paid,
    chatters: 0,
    seed,
    deadlineVsIdeal: config.deadlineVsIdeal,
  });
  // Each round: every contender free, then every contender paid, in the round's order.
  const rounds = await runRounds(
    CONTENDERS,
    { rounds: config.rounds, seed: config.seed },
    async (contender, round: Round) => ({
      free: await runOne(
        contender,
        at(config.roundFreeRecipients, config.freeScale, false, round.seed),
      ),
      paid: await runOne(contender, at(config.roundPaidRecipients, 1, true, round.seed)),
    }),
  );
  const free = await runOne(
    telepaceContender,
    at(config.recipients, config.freeScale, false, config.seed),
  );
  const paid = await runOne(telepaceContender, at(config.recipients, 1, true, config.seed));
  const chatting: BroadcastRun[] = [];
  for (const contender of CONTENDERS) {
    chatting.push(
      await runOne(contender, {
        ...at(config.chatRecipients, config.freeScale, false, config.seed),
        chatters: config.chatters,
      }),
    );
  }
  // telepace alone, so no deadline: how long the fallback takes is what it measures.
  const refused = await runOne(telepaceContender, {
    ...at(config.refusedRecipients, config.freeScale, true, config.seed),
    paidBroadcasts: false,
    deadlineVsIdeal: Number.POSITIVE_INFINITY,
  });
  const fileCrash = await runCrash("file", config.crashRecipients, 1);
  const redisCrash = await runCrash("redis", config.crashRecipients, config.processes);
  const telepaceChatting = chatting[0] as BroadcastRun;
  const [tp, loop, loopRetry] = CONTENDERS.map(({ id }) => id) as [string, string, string];
  const perRound = (kind: "free" | "paid", id: string) =>
    rounds.perRound((result) => result(id)[kind].vsIdeal);
  const summary = {
    ...roundSummary(config.rounds, {
      freeVsIdealRounds: perRound("free", tp),
      paidVsIdealRounds: perRound("paid", tp),
      freeLoopVsIdealRounds: perRound("free", loop),
      freeLoopRetryVsIdealRounds: perRound("free", loopRetry),
      paidLoopVsIdealRounds: perRound("paid", loop),
      paidLoopRetryVsIdealRounds: perRound("paid", loopRetry),
    }),
    recipients: config.recipients,
    freeVsIdeal: free.vsIdeal,
    paidVsIdeal: paid.vsIdeal,
    freeVsNominal: free.vsNominal,
    paidVsNominal: paid.vsNominal,
    rateLimited: [
      free,
      paid,
      telepaceChatting,
      ...rounds.of(tp).flatMap((round) => [round.free, round.paid]),
    ].reduce((sum, run) => sum + run.tooManyRequests, 0),
    duplicatesBeyondInFlight: fileCrash.duplicatesBeyondInFlight,
    missedAfterKill: fileCrash.missed,
    processes: redisCrash.processes,
    missedAfterProcessKill: redisCrash.missed,
    othersReplyP99MsDuringBroadcast: telepaceChatting.replyP99Ms,
    freeRequestP50Ms: free.timing.durationP50Ms,
    freeRequestP99Ms: free.timing.durationP99Ms,
    paidRequestP50Ms: paid.timing.durationP50Ms,
    paidRequestP99Ms: paid.timing.durationP99Ms,
  };
  return {
    area: "broadcast",
    tables: broadcastTables({
      config,
      rounds,
      free,
      paid,
      chatting,
      refused,
      fileCrash,
      redisCrash,
    }),
    figures: { config, summary, rounds, free, paid, chatting, refused, fileCrash, redisCrash },
    durationMs: performance.now() - started,
  };
}

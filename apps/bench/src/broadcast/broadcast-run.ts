// One contender's broadcast against a fresh sim: the run as the contender reports it, and what the
// sim saw of it (429s, missed and doubled recipients, replies to the people chatting, timing).

import { ratio, summarize } from "../stats.js";
import { FREE, idealMs, PAID } from "./config.js";
import type { BroadcastTarget, Contender, ContenderRun } from "./contenders.js";
import { RunDeadline } from "./deadline.js";
import type { SimHost } from "./sim-link.js";
import { analyseTiming, RequestLog, type RunTiming } from "./timing.js";

/** The outbox's `pacingMarginMs` default: the most its global second widens. */
const MARGIN_CAP_MS = 100;

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
   * elapsed ÷ the ideal. A run cut by its deadline: the documented pace ÷ its pace over what it
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

export interface RunOptions {
  readonly recipients: number;
  readonly scale: number;
  readonly paid: boolean;
  readonly paidBroadcasts: boolean;
  readonly chatters: number;
  readonly seed: number;
  readonly deadlineVsIdeal: number;
}

/**
 * Runs one contender's broadcast against a fresh sim in `host`'s process and reads what the sim
 * saw of it.
 */
export async function runOne(
  host: SimHost,
  contender: Contender,
  options: RunOptions,
): Promise<BroadcastRun> {
  const started = performance.now();
  const sim = await host.open({
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
      deadline: new RunDeadline(deadlineMs, options.recipients, pace),
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

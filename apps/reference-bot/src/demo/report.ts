// The embedded demo's final report and live progress line: what the bot handled, what it cost in
// API calls, and whether every expected reply arrived.

import type { BotApiSim } from "@telepace/bot-api-sim";
import type { ProgressEditOutcome } from "../bot-events.js";
import type { BotStats } from "../reference-bot.js";
import type { BotLedger } from "./bot-ledger.js";
import type { Expectation } from "./expectation.js";
import { maxInWindow } from "./send-rates.js";

/** How a /work job's progress message reads (`Working… 40% ▓▓▓▓░░░░░░`). */
const PROGRESS_TEXT = "Working…";

/** Everything the report shows, also handy for tests. */
export interface DemoSummary {
  readonly expected: number;
  readonly met: number;
  readonly missing: readonly Expectation[];
  readonly byKind: Readonly<Record<string, { expected: number; met: number }>>;
  readonly tooManyRequests: number;
  /** Bot API calls the bot made, by method (the sim's count less the crowd's own). */
  readonly calls: Readonly<Record<string, number>>;
  /** Bot API calls the crowd made itself to check the bot's files, by method. */
  readonly crowdCalls: Readonly<Record<string, number>>;
  /** Progress-bar edits the sim applied (its transcripts' edits of a "Working…" text). */
  readonly progressEditsSeen: number;
  readonly maxPrivatePerSecond: number;
  /** Most messages to one private chat in any 10 s, divided by 10: the sustained rate. */
  readonly maxPrivateSustained: number;
  readonly maxGroupPerMinute: number;
}

/** The crash scene: the bot killed with SIGKILL and started again on its journal. */
export interface CrashRecord {
  /** Seconds into the demo when the bot was killed. */
  readonly atS: number;
  /** From the kill until the new process polled, in ms. */
  readonly restartMs: number;
  /** Stored updates the new process found unfinished and replayed. */
  readonly replayed: number;
  /** Job records the new process found (jobs running at the kill). */
  readonly leftoverJobs: number;
}

/** What the demo knows about the bot: its processes' reports and the crash. */
export interface BotRun {
  readonly stats: BotStats;
  readonly ledger: BotLedger;
  /** Which journal the bot ran on. */
  readonly journal: string;
  readonly crashes: readonly CrashRecord[];
}

/** The latency of every met expectation, in ms. */
export function replyLatencies(expectations: readonly Expectation[]): number[] {
  return expectations.flatMap((e) => (e.met && e.latencyMs !== undefined ? [e.latencyMs] : []));
}

/** Updates the sim queued for the bot whose processing never ended in any bot process. */
export function updatesLost(sim: BotApiSim, ledger: BotLedger): number {
  return sim.counters().updatesQueued - ledger.updatesHandled;
}

/** Sums up the run from the crowd's expectations, the sim's counters and transcripts. */
export function summarize(
  sim: BotApiSim,
  expectations: readonly Expectation[],
  chatIds: readonly number[],
  crowdCalls: Readonly<Record<string, number>> = {},
): DemoSummary {
  const byKind: Record<string, { expected: number; met: number }> = {};
  for (const expectation of expectations) {
    const entry = byKind[expectation.kind] ?? { expected: 0, met: 0 };
    byKind[expectation.kind] = entry;
    entry.expected++;
    if (expectation.met) entry.met++;
  }
  let maxPrivatePerSecond = 0;
  let maxPrivateSustained = 0;
  let maxGroupPerMinute = 0;
  let progressEditsSeen = 0;
  for (const chatId of chatIds) {
    const transcript = sim.transcript(chatId);
    for (const event of transcript.events) {
      if (event.kind === "edit" && event.actor === "bot" && event.text?.startsWith(PROGRESS_TEXT))
        progressEditsSeen++;
    }
    if (transcript.chat.type === "private") {
      maxPrivatePerSecond = Math.max(maxPrivatePerSecond, maxInWindow(transcript.events, 1000));
      maxPrivateSustained = Math.max(
        maxPrivateSustained,
        maxInWindow(transcript.events, 10_000) / 10,
      );
    } else {
      maxGroupPerMinute = Math.max(maxGroupPerMinute, maxInWindow(transcript.events, 60_000));
    }
  }
  const counters = sim.counters();
  const calls: Record<string, number> = { ...counters.calls };
  for (const [method, count] of Object.entries(crowdCalls)) {
    calls[method] = (calls[method] ?? 0) - count;
    if (calls[method] === 0) delete calls[method];
  }
  return {
    expected: expectations.length,
    met: expectations.filter((e) => e.met).length,
    missing: expectations.filter((e) => !e.met),
    byKind,
    tooManyRequests: counters.tooManyRequests,
    calls,
    crowdCalls: { ...crowdCalls },
    progressEditsSeen,
    maxPrivatePerSecond,
    maxPrivateSustained,
    maxGroupPerMinute,
  };
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** The `p`th percentile (nearest rank) of `values`; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** The words the report names each progress-edit outcome with. */
const PROGRESS_WORDS: Readonly<Record<ProgressEditOutcome, string>> = {
  sent: "sent",
  coalesced: "coalesced",
  dropped: "dropped by the final message",
  unchanged: "not modified",
  failed: "failed",
  closed: "closed at shutdown",
  rejected: "rejected (outbox full)",
  skipped: "skipped (chat unreachable)",
};

/**
 * `total words = a x + b y + …`: the report's way of saying that a figure is the sum of its parts,
 * each part named. Parts in `always` are shown even at 0, the others only when they happened.
 */
export function equation(
  total: number,
  words: string,
  parts: readonly (readonly [count: number, words: string, always?: boolean])[],
): string {
  const shown = parts.filter(([count, , always]) => count !== 0 || always === true);
  return `${total} ${words} = ${shown.map(([count, name]) => `${count} ${name}`).join(" + ")}`;
}

function sumOf(record: Readonly<Record<string, number>>): number {
  return Object.values(record).reduce((a, b) => a + b, 0);
}

function byCount(record: Readonly<Record<string, number>>): [string, number][] {
  return Object.entries(record).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/**
 * The report as text. Every line that adds up says so as an {@link equation}
 * (`86 requested = 11 sent + 68 coalesced + …`), which the tests check.
 */
export function formatReport(
  summary: DemoSummary,
  run: BotRun,
  sim: BotApiSim,
  expectations: readonly Expectation[],
  elapsedS: number,
): string {
  const { stats, ledger } = run;
  const counters = sim.counters();
  const jobs = ledger.jobs();
  const progress = ledger.progressEdits();
  const answers = ledger.answers();
  const fetches = ledger.fetches();
  const handlings = ledger.handlingOutcomes;
  const latencies = replyLatencies(expectations);
  const kinds = Object.entries(summary.byKind)
    .map(([kind, { expected, met }]) => `${kind} ${met}/${expected}`)
    .join(", ");
  const crowdCalls = byCount(summary.crowdCalls)
    .map(([method, count]) => `${count} ${method}`)
    .join(", ");
  const lost = updatesLost(sim, ledger);
  const lines = [
    "",
    `telepace reference bot — embedded demo report (${elapsedS.toFixed(1)} s)`,
    `  updates               ${equation(counters.updatesQueued, "sent to the bot", [
      [ledger.updatesHandled, "handled", true],
      [lost, "lost", true],
    ])}; ${handlings.failed} failed, ${handlings["timed-out"]} timed out, ${ledger.updatesRepeated} ran again after a crash`,
    `  journal               ${run.journal}; ${equation(fetches.fetched, "updates fetched", [
      [fetches.distinct, "distinct", true],
      [fetches.cutOff, "fetched again after the crash (its last batch, not yet stored)"],
      [fetches.unexplained, "UNACCOUNTED refetches"],
    ])}`,
    ...run.crashes.map(
      (crash) =>
        `  crash                 SIGKILL at ${crash.atS.toFixed(1)} s; polling again ${(crash.restartMs / 1000).toFixed(1)} s later: ${plural(crash.replayed, "unfinished update")} replayed, ${plural(crash.leftoverJobs, "running job")} found`,
    ),
    `  API calls             ${equation(
      sumOf(summary.calls),
      "by the bot",
      byCount(summary.calls).map(([method, count]) => [count, method] as const),
    )}${crowdCalls === "" ? "" : `; the crowd's own checks made ${crowdCalls}`}`,
    `  progress edits        ${equation(progress.requested, "requested by /work jobs", [
      ...(Object.keys(PROGRESS_WORDS) as ProgressEditOutcome[]).map(
        (outcome) =>
          [
            progress.settled[outcome],
            PROGRESS_WORDS[outcome],
            outcome === "sent" || outcome === "coalesced",
          ] as const,
      ),
      [progress.cutOff, "cut off by the crash"],
      [progress.unaccounted, "UNACCOUNTED"],
    ])}`,
    `  answers (/ask)        ${equation(answers.asked, "streamed", [
      [answers.ended.delivered, "delivered", true],
      [answers.ended.stopped, "stopped by the user", true],
      [answers.ended.failed, "failed"],
      [answers.cutOff, "cut off by the crash (asked again after the restart)"],
      [answers.unaccounted, "UNACCOUNTED"],
    ])}; the answers that ended showed ${plural(answers.draftFrames, "draft frame")} and ${plural(answers.edits, "edit")}`,
    `  429s received         ${summary.tooManyRequests}${summary.tooManyRequests === 0 ? " (target 0)" : " (target 0 — MISSED)"}`,
    `  replies delivered     ${summary.met}/${summary.expected} expected (${kinds})`,
    `  reply latency         p50 ${(percentile(latencies, 50) / 1000).toFixed(2)} s, p99 ${(percentile(latencies, 99) / 1000).toFixed(2)} s`,
    `  jobs                  ${equation(jobs.started, "started", [
      [jobs.ended.done, "done", true],
      [jobs.ended.cancelled, "cancelled", true],
      [jobs.ended.interrupted, "interrupted"],
      [jobs.ended.undeliverable, "undeliverable"],
      [jobs.recovered, `recovered after a crash (${plural(jobs.recoveredDelivered, "user")} told)`],
      [jobs.unaccounted, "UNACCOUNTED"],
    ])}`,
    `  files                 ${stats.router.documents} documents received (${stats.router.documentBytes} bytes), ${stats.router.filesSent} sent (${stats.router.fileBytes} bytes); the sim took in ${counters.bytesUploaded} bytes (the crowd's documents, the bot's files) and served ${counters.bytesServed} (to the bot, and to the crowd checking the files)`,
    `  busiest chats         private: ${summary.maxPrivateSustained.toFixed(1)} msg/s sustained over 10 s, ${summary.maxPrivatePerSecond} in any 1 s; group: ${summary.maxGroupPerMinute} in any 60 s`,
    `  chats unreachable     ${stats.messenger.unreachable} (blocked the bot); migrations followed ${stats.messenger.migrations}`,
  ];
  for (const missing of summary.missing)
    lines.push(`  MISSING  ${missing.kind} for ${missing.user}: ${missing.problem}`);
  lines.push(
    summary.missing.length === 0
      ? "  result                every expected reply arrived"
      : `  result                ${summary.missing.length} expected replies missing`,
  );
  return lines.join("\n");
}

/**
 * Every equation of a report (`total words = a x + b y + …`, up to a `;`) whose parts do not add
 * up to its total, and every part named UNACCOUNTED: empty when the report reconciles.
 */
export function unreconciled(report: string): string[] {
  const problems: string[] = [];
  for (const line of report.split("\n")) {
    for (const clause of line.split(";")) {
      const match = /(\d+) [^=]*= (.*)$/.exec(clause);
      if (match === null) continue;
      const parts = (match[2] as string).split(" + ");
      const total = Number(match[1]);
      const added = parts.reduce((a, part) => a + Number(/^\d+/.exec(part)?.[0] ?? Number.NaN), 0);
      if (added !== total) problems.push(`${clause.trim()}: the parts add up to ${added}`);
      for (const part of parts) {
        if (part.includes("UNACCOUNTED")) problems.push(`${clause.trim()}: ${part}`);
      }
    }
  }
  return problems;
}

/** The one-line live status shown on a TTY while the crowd plays. */
export function progressLine(
  elapsedS: number,
  ledger: BotLedger,
  sim: BotApiSim,
  expectations: readonly Expectation[],
): string {
  const counters = sim.counters();
  const met = expectations.filter((e) => e.met).length;
  const calls = Object.values(counters.calls).reduce((a, b) => a + b, 0);
  const stats = ledger.stats();
  const coalesced = ledger.progressEdits().settled.coalesced;
  return `[${elapsedS.toFixed(0).padStart(3)} s] updates ${ledger.updatesHandled} · API calls ${calls} · progress edits coalesced ${coalesced} · jobs running ${stats?.jobs.running ?? 0} · replies ${met}/${expectations.length} · 429s ${counters.tooManyRequests}`;
}

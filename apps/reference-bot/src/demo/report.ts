// The embedded demo's final report and live progress line: what the bot handled, what it cost in
// API calls, and whether every expected reply arrived.

import type { BotApiSim } from "@telepace/bot-api-sim";
import type { BotStats } from "../reference-bot.js";
import type { Expectation } from "./crowd.js";
import { maxInWindow } from "./send-rates.js";

/** Everything the report shows, also handy for tests. */
export interface DemoSummary {
  readonly expected: number;
  readonly met: number;
  readonly missing: readonly Expectation[];
  readonly byKind: Readonly<Record<string, { expected: number; met: number }>>;
  readonly tooManyRequests: number;
  readonly calls: Readonly<Record<string, number>>;
  readonly maxPrivatePerSecond: number;
  /** Most messages to one private chat in any 10 s, divided by 10: the sustained rate. */
  readonly maxPrivateSustained: number;
  readonly maxGroupPerMinute: number;
}

/** Sums up the run from the crowd's expectations, the sim's counters and transcripts. */
export function summarize(
  sim: BotApiSim,
  expectations: readonly Expectation[],
  chatIds: readonly number[],
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
  for (const chatId of chatIds) {
    const transcript = sim.transcript(chatId);
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
  return {
    expected: expectations.length,
    met: expectations.filter((e) => e.met).length,
    missing: expectations.filter((e) => !e.met),
    byKind,
    tooManyRequests: counters.tooManyRequests,
    calls: counters.calls,
    maxPrivatePerSecond,
    maxPrivateSustained,
    maxGroupPerMinute,
  };
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** The report as text. */
export function formatReport(
  summary: DemoSummary,
  stats: BotStats,
  sim: BotApiSim,
  expectations: readonly Expectation[],
  elapsedS: number,
): string {
  const counters = sim.counters();
  const calls = Object.entries(summary.calls)
    .sort((a, b) => b[1] - a[1])
    .map(([method, count]) => `${method} ${count}`)
    .join(", ");
  const latencies = expectations.flatMap((e) =>
    e.met && e.latencyMs !== undefined ? [e.latencyMs] : [],
  );
  const kinds = Object.entries(summary.byKind)
    .map(([kind, { expected, met }]) => `${kind} ${met}/${expected}`)
    .join(", ");
  const lines = [
    "",
    `telepace reference bot — embedded demo report (${elapsedS.toFixed(1)} s)`,
    `  updates handled       ${stats.dispatcher.succeeded + stats.dispatcher.failed} (${stats.dispatcher.failed} failed, ${stats.dispatcher.timedOut} timed out; each fetched once: ${stats.intake.fetched} fetched, ${stats.intake.duplicates} duplicates)`,
    `  API calls             ${Object.values(summary.calls).reduce((a, b) => a + b, 0)}: ${calls}`,
    `  progress edits        ${stats.jobs.progressRequested} requested, ${summary.calls.editMessageText ?? 0} sent (${stats.outbox.coalesced} coalesced in the outbox)`,
    `  429s received         ${summary.tooManyRequests}${summary.tooManyRequests === 0 ? " (target 0)" : " (target 0 — MISSED)"}`,
    `  replies delivered     ${summary.met}/${summary.expected} expected (${kinds})`,
    `  reply latency         p50 ${(percentile(latencies, 50) / 1000).toFixed(2)} s, p99 ${(percentile(latencies, 99) / 1000).toFixed(2)} s`,
    `  jobs                  ${stats.jobs.started} started: ${stats.jobs.ended.done} done, ${stats.jobs.ended.cancelled} cancelled, ${stats.jobs.ended.interrupted} interrupted, ${stats.jobs.ended.undeliverable} undeliverable`,
    `  files                 ${stats.router.documents} documents received (${stats.router.documentBytes} bytes), ${stats.router.filesSent} sent (${stats.router.fileBytes} bytes); sim served ${counters.bytesServed} and received ${counters.bytesUploaded} bytes`,
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

/** The one-line live status shown on a TTY while the crowd plays. */
export function progressLine(
  elapsedS: number,
  stats: BotStats,
  sim: BotApiSim,
  expectations: readonly Expectation[],
): string {
  const counters = sim.counters();
  const met = expectations.filter((e) => e.met).length;
  const calls = Object.values(counters.calls).reduce((a, b) => a + b, 0);
  return `[${elapsedS.toFixed(0).padStart(3)} s] updates ${stats.dispatcher.accepted} · API calls ${calls} · coalesced ${stats.outbox.coalesced} · jobs running ${stats.jobs.running} · replies ${met}/${expectations.length} · 429s ${counters.tooManyRequests}`;
}

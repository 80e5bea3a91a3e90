// The embedded demo's final report and live progress line: what the bot handled, what it cost in
// API calls, and whether every expected reply arrived.

import type { BotApiSim } from "@telepace/bot-api-sim";
import type { BotStats } from "../reference-bot.js";
import type { BotLedger } from "./bot-ledger.js";
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

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** The `p`th percentile (nearest rank) of `values`; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** The report as text. */
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
  const calls = Object.entries(summary.calls)
    .sort((a, b) => b[1] - a[1])
    .map(([method, count]) => `${method} ${count}`)
    .join(", ");
  const latencies = replyLatencies(expectations);
  const kinds = Object.entries(summary.byKind)
    .map(([kind, { expected, met }]) => `${kind} ${met}/${expected}`)
    .join(", ");
  const lines = [
    "",
    `telepace reference bot — embedded demo report (${elapsedS.toFixed(1)} s)`,
    `  updates handled       ${ledger.updatesHandled} of ${counters.updatesQueued} sent to the bot, lost ${updatesLost(sim, ledger)} (${stats.dispatcher.failed} failed, ${stats.dispatcher.timedOut} timed out, ${ledger.updatesRepeated} ran again after a crash)`,
    `  journal               ${run.journal}; ${stats.intake.fetched} updates fetched, ${stats.intake.duplicates} fetched twice`,
    ...run.crashes.map(
      (crash) =>
        `  crash                 SIGKILL at ${crash.atS.toFixed(1)} s; polling again ${(crash.restartMs / 1000).toFixed(1)} s later: ${plural(crash.replayed, "unfinished update")} replayed, ${plural(crash.leftoverJobs, "running job")} found`,
    ),
    `  API calls             ${Object.values(summary.calls).reduce((a, b) => a + b, 0)}: ${calls}`,
    `  progress edits        ${stats.jobs.progressRequested} requested, ${summary.calls.editMessageText ?? 0} sent (${stats.outbox.coalesced} coalesced in the outbox)`,
    `  429s received         ${summary.tooManyRequests}${summary.tooManyRequests === 0 ? " (target 0)" : " (target 0 — MISSED)"}`,
    `  replies delivered     ${summary.met}/${summary.expected} expected (${kinds})`,
    `  reply latency         p50 ${(percentile(latencies, 50) / 1000).toFixed(2)} s, p99 ${(percentile(latencies, 99) / 1000).toFixed(2)} s`,
    `  jobs                  ${jobs.started} started: ${jobs.ended.done} done, ${jobs.ended.cancelled} cancelled, ${jobs.ended.interrupted} interrupted, ${jobs.ended.undeliverable} undeliverable; recovered ${jobs.recovered} after a crash (${jobs.recoveredDelivered} users told)${jobs.unaccounted > 0 ? `, ${jobs.unaccounted} UNACCOUNTED` : ""}`,
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
  ledger: BotLedger,
  sim: BotApiSim,
  expectations: readonly Expectation[],
): string {
  const counters = sim.counters();
  const met = expectations.filter((e) => e.met).length;
  const calls = Object.values(counters.calls).reduce((a, b) => a + b, 0);
  const stats = ledger.stats();
  return `[${elapsedS.toFixed(0).padStart(3)} s] updates ${ledger.updatesHandled} · API calls ${calls} · coalesced ${stats?.outbox.coalesced ?? 0} · jobs running ${stats?.jobs.running ?? 0} · replies ${met}/${expectations.length} · 429s ${counters.tooManyRequests}`;
}

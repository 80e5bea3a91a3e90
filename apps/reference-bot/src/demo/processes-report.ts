// What the several-processes demo knows: each process's reports over its supervisor channel (the
// updates it handled and fetched, its jobs and the Cancel presses it answered), the replies the
// sim saw in every chat, and the kill; and the report made of them, every sum an equation.

import type { BotApiSim } from "@telepace/bot-api-sim";
import type { SupervisorMessage } from "../supervisor-channel.js";
import { BotLedger } from "./bot-ledger.js";
import { equation, plural } from "./report.js";

/** One reply the crowd waits for. */
export interface ProcessesExpectation {
  readonly kind: "echo" | "group" | "cancel" | "interrupted";
  readonly chatId: number;
  readonly matches: (text: string) => boolean;
  met: boolean;
}

/** The kill scene: a process killed with SIGKILL while it served. */
export interface KillRecord {
  /** 1-based, in start order. */
  readonly process: number;
  readonly pid: number;
  readonly atS: number;
  readonly wasPoller: boolean;
  /** Chats whose update the process held (leased) when it died. */
  readonly heldChats: number;
  /** The updates it held: each runs again elsewhere, and may have been answered already. */
  readonly heldUpdates: number;
  readonly heldJobs: number;
  /** From the kill to the next reply at the sim in each held chat, the longest; ms. */
  readonly repliesAgainAfterMs: number | undefined;
  /** From the kill until its jobs were ended by another process; ms. */
  readonly jobsEndedAfterMs: number | undefined;
  /** From the kill until another process fetched updates; ms. */
  readonly pollingAfterMs: number | undefined;
}

/**
 * What every process reported, by process (1-based): the bot's ledger of updates and jobs over
 * all of them, and which process each job and poll came from.
 */
export class ProcessesTally {
  readonly ledger = new BotLedger();
  readonly #jobOwner = new Map<string, number>();
  readonly #jobsEnded = new Set<string>();
  readonly #lastFetch = new Map<number, number>();
  #cancelsHonoured = 0;
  #cancelsRefused = 0;
  #cancelsElsewhere = 0;

  /** Records one message of process `index`, received at `atMs` (systemClock). */
  record(index: number, message: SupervisorMessage, atMs: number): void {
    // The ledger's per-process tallies follow one process at a time; its updates and jobs do not.
    if (message.type !== "ready" && message.type !== "stats") this.ledger.record(message);
    switch (message.type) {
      case "updates-fetched":
        this.#lastFetch.set(index, atMs);
        break;
      case "job-started":
        this.#jobOwner.set(message.jobId, index);
        break;
      case "job-ended":
      case "job-recovered":
        this.#jobsEnded.add(message.jobId);
        break;
      case "job-cancel-asked":
        if (message.isHonoured) this.#cancelsHonoured++;
        else this.#cancelsRefused++;
        if (message.isHonoured && message.isElsewhere) this.#cancelsElsewhere++;
        break;
    }
  }

  /** The process whose job `jobId` is, if it started. */
  processOfJob(jobId: string): number | undefined {
    return this.#jobOwner.get(jobId);
  }

  /** Jobs of `index` with no ending yet (its own, or another process's). */
  runningJobsOf(index: number): number {
    let running = 0;
    for (const [id, owner] of this.#jobOwner) {
      if (owner === index && !this.#jobsEnded.has(id)) running++;
    }
    return running;
  }

  /** The process that fetched updates last (the poller), if any did. */
  get lastPoller(): number | undefined {
    let latest: [number, number] | undefined;
    for (const [index, at] of this.#lastFetch) {
      if (latest === undefined || at > latest[1]) latest = [index, at];
    }
    return latest?.[0];
  }

  /** When a process other than `index` last fetched updates. */
  fetchedByOtherThan(index: number): number | undefined {
    let latest: number | undefined;
    for (const [other, at] of this.#lastFetch) {
      if (other !== index) latest = Math.max(latest ?? at, at);
    }
    return latest;
  }

  get cancels() {
    return {
      honoured: this.#cancelsHonoured,
      refused: this.#cancelsRefused,
      elsewhere: this.#cancelsElsewhere,
    };
  }
}

/** The bot's sends in a chat, in order. */
export function botTexts(sim: BotApiSim, chatId: number): string[] {
  return sim
    .transcript(chatId)
    .events.filter((event) => event.actor === "bot" && event.kind === "send")
    .map((event) => event.text ?? "");
}

/** The run's figures from the sim's transcripts: duplicates and per-chat order of the echoes. */
export function echoFigures(sim: BotApiSim, chatIds: readonly number[]) {
  let duplicates = 0;
  let outOfOrder = 0;
  for (const chatId of chatIds) {
    const echoes = botTexts(sim, chatId).filter((text) => text.startsWith("You said: "));
    duplicates += echoes.length - new Set(echoes).size;
    const numbers = echoes.map((text) => Number(/message (\d+)/.exec(text)?.[1] ?? Number.NaN));
    if (numbers.some((n, i) => i > 0 && n < (numbers[i - 1] as number))) outOfOrder++;
  }
  return { duplicates, outOfOrder };
}

/** Everything the report is made of. */
export interface ProcessesRun {
  readonly processes: readonly { readonly pid: number }[];
  readonly redis: string;
  readonly elapsedS: number;
  readonly expectations: readonly ProcessesExpectation[];
  readonly tally: ProcessesTally;
  readonly kill: KillRecord | undefined;
  readonly duplicates: number;
  readonly outOfOrder: number;
  readonly busiestSecond: number;
}

function ms(value: number | undefined): string {
  return value === undefined ? "never" : `${(value / 1000).toFixed(2)} s`;
}

/** The report, in the embedded demo's form. */
export function formatProcessesReport(sim: BotApiSim, run: ProcessesRun): string {
  const { tally, kill } = run;
  const { ledger } = tally;
  const counters = sim.counters();
  const lost = counters.updatesQueued - ledger.updatesHandled;
  const jobs = ledger.jobs();
  const outcomes = ledger.handlingOutcomes;
  const cancels = tally.cancels;
  const kinds = new Map<string, { expected: number; met: number }>();
  for (const e of run.expectations) {
    const entry = kinds.get(e.kind) ?? { expected: 0, met: 0 };
    entry.expected++;
    if (e.met) entry.met++;
    kinds.set(e.kind, entry);
  }
  const met = run.expectations.filter((e) => e.met).length;
  // Every update the killed process held runs again elsewhere (it may have been answered
  // already); an update reported handled twice is one of them.
  const ranAgain = Math.max(ledger.updatesRepeated, kill?.heldUpdates ?? 0);
  const explained = Math.min(run.duplicates, ranAgain);
  const lines = [
    "",
    `telepace reference bot — ${run.processes.length} processes on one Redis (report, ${run.elapsedS.toFixed(1)} s)`,
    `  processes             ${run.processes.length} of one bot (pids ${run.processes.map((p) => p.pid).join(", ")}) on ${run.redis}; each polls when it holds the lease, and works`,
    `  updates               ${equation(counters.updatesQueued, "sent to the bot", [
      [ledger.updatesHandled, "handled", true],
      [lost, "lost", true],
    ])}; ${outcomes.failed} failed, ${outcomes["timed-out"]} timed out, ${ranAgain} ran again after the kill (held by the killed process)`,
    `  replies delivered     ${met}/${run.expectations.length} expected (${[...kinds]
      .map(([kind, { expected, met: got }]) => `${kind} ${got}/${expected}`)
      .join(", ")})`,
    `  duplicates            ${equation(run.duplicates, "replies sent twice", [
      [explained, "by an update the killed process held, run again (at least once)", true],
      [run.duplicates - explained, "UNACCOUNTED"],
    ])}`,
    `  order                 ${run.outOfOrder} chats answered out of order (target 0)`,
    `  cancels               ${equation(cancels.honoured + cancels.refused, "Cancel presses", [
      [cancels.honoured, `honoured (${cancels.elsewhere} by a process other than the job's)`, true],
      [cancels.refused, "refused (not the owner, or the job had ended)"],
    ])}`,
    `  jobs                  ${equation(jobs.started, "started", [
      [jobs.ended.done, "done", true],
      [jobs.ended.cancelled, "cancelled", true],
      [jobs.ended.interrupted, "interrupted"],
      [jobs.ended.undeliverable, "undeliverable"],
      [
        jobs.recovered,
        `ended by another process after the kill (${plural(jobs.recoveredDelivered, "user")} told)`,
      ],
      [jobs.unaccounted, "UNACCOUNTED"],
    ])}`,
    ...(kill === undefined
      ? []
      : [
          `  kill                  SIGKILL of process ${kill.process} (pid ${kill.pid}${kill.wasPoller ? ", the poller" : ""}) at ${kill.atS.toFixed(1)} s while it held ${kill.heldChats === 0 ? "no chat's update" : `updates of ${plural(kill.heldChats, "chat")}`} and ${plural(kill.heldJobs, "running job")}: ${[
            ...(kill.heldChats === 0
              ? []
              : [
                  `those chats' next replies came ${ms(kill.repliesAgainAfterMs)} later at the sim (the longest)`,
                ]),
            `its jobs were ended ${ms(kill.jobsEndedAfterMs)} later`,
            ...(kill.wasPoller ? [`polling went on ${ms(kill.pollingAfterMs)} later`] : []),
          ].join(", ")}`,
        ]),
    `  429s received         ${counters.tooManyRequests}${counters.tooManyRequests === 0 ? " (target 0)" : " (target 0 — MISSED)"}`,
    `  busiest second        ${run.busiestSecond} sends in any 1 s (Telegram allows 30)`,
  ];
  for (const e of run.expectations) {
    if (!e.met) lines.push(`  MISSING  ${e.kind} in chat ${e.chatId}`);
  }
  const missing = run.expectations.length - met;
  lines.push(
    missing === 0
      ? "  result                every expected reply arrived"
      : `  result                ${missing} expected replies missing`,
  );
  return lines.join("\n");
}

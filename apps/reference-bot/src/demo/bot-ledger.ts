// What the demo knows about the bot across its processes: every update handled, every job started
// and how it ended (in the same process, or recovered by the next one after a crash), the chats it
// stopped writing to, and the last counters of each process. The supervisor channel's lines are
// written synchronously, so a process killed with SIGKILL has reported everything it did, save
// what a durable write had finished when the kill came but not yet reported.

import type { AnswerEnd, JobEnd, ProgressEditOutcome } from "../bot-events.js";
import type { BotStats } from "../reference-bot.js";
import type { SupervisorMessage } from "../supervisor-channel.js";

/** How the jobs of every process ended. */
export interface JobTally {
  /** Jobs reported started, and jobs recovered whose start the kill cut off. */
  readonly started: number;
  /** Jobs ended in their own process, and not ended again by a recovery. */
  readonly ended: Readonly<Record<JobEnd, number>>;
  /**
   * Jobs a killed process left recorded that the next one ended with a message (one that had
   * ended just before the kill, its record not yet removed, is ended again here).
   */
  readonly recovered: number;
  /** Of those, the ones whose message reached the user. */
  readonly recoveredDelivered: number;
  /** Started jobs with no ending at all: lost (0 unless something is wrong). */
  readonly unaccounted: number;
}

/**
 * What became of the progress edits /work jobs asked for, over every process. `requested` is the
 * sum of `settled`, `cutOff` and `unaccounted`.
 */
export interface ProgressTally {
  readonly requested: number;
  readonly settled: Readonly<Record<ProgressEditOutcome, number>>;
  /** Edits still waiting (or in flight) in a process that was killed: they went with it. */
  readonly cutOff: number;
  /** Edits of a process that stopped cleanly with no outcome: lost (0 unless something is wrong). */
  readonly unaccounted: number;
}

/** How the /ask answers of every process ended. `asked` is the sum of the other four. */
export interface AnswerTally {
  readonly asked: number;
  readonly ended: Readonly<Record<AnswerEnd, number>>;
  /** Answers streaming in a process that was killed: their update runs again after the restart. */
  readonly cutOff: number;
  /** Answers of a process that stopped cleanly with no ending (0 unless something is wrong). */
  readonly unaccounted: number;
  /** Draft frames Telegram accepted, over the answers that ended. */
  readonly draftFrames: number;
  /** Progress-message edits Telegram accepted, over the answers that ended. */
  readonly edits: number;
}

/** What one process reported as it went. */
interface ProcessTally {
  isStopped: boolean;
  progressRequested: number;
  readonly progress: Record<ProgressEditOutcome, number>;
  answersStarted: number;
  readonly answers: Record<AnswerEnd, number>;
  draftFrames: number;
  edits: number;
  /** The update ids of the last batch getUpdates returned to it. */
  lastBatch: readonly number[];
}

/**
 * Updates getUpdates returned, over every process. `fetched` is `distinct` plus `cutOff` plus
 * `unexplained`, each of the last two counting the extra fetches of an update.
 */
export interface FetchTally {
  readonly fetched: number;
  readonly distinct: number;
  /**
   * Fetched again after a crash: they were in the last batch of the killed process, which it had
   * not stored (so not confirmed) when it died.
   */
  readonly cutOff: number;
  /** Fetched again for any other reason (0 unless something is wrong). */
  readonly unexplained: number;
}

const PROGRESS_OUTCOMES: readonly ProgressEditOutcome[] = [
  "sent",
  "unchanged",
  "coalesced",
  "dropped",
  "failed",
  "closed",
  "rejected",
  "skipped",
];
const ANSWER_ENDS: readonly AnswerEnd[] = ["delivered", "stopped", "failed"];

function zeroes<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
}

function sum(values: Iterable<number>): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

/** Adds numeric leaves of same-shaped records (counters of several processes). */
function addCounters<T>(a: T, b: T): T {
  if (typeof a === "number" && typeof b === "number") return (a + b) as T;
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return b;
  const sum: Record<string, unknown> = { ...(a as Record<string, unknown>) };
  for (const [key, value] of Object.entries(b as Record<string, unknown>)) {
    sum[key] = key in sum ? addCounters(sum[key], value) : value;
  }
  return sum as T;
}

/** Accounts for the bot's work across processes, from their supervisor messages. */
export class BotLedger {
  /** Times each update's processing ended, by update id. */
  readonly #handled = new Map<number, number>();
  readonly #started = new Set<string>();
  readonly #ended = new Map<string, JobEnd>();
  readonly #recovered = new Map<string, boolean>();
  readonly #unreachable = new Set<number>();
  /** Times each update was returned by getUpdates, by update id. */
  readonly #fetched = new Map<number, number>();
  readonly #handlingOutcomes = { succeeded: 0, failed: 0, "timed-out": 0 };
  /** The last counters of each process, in start order. */
  readonly #stats: BotStats[] = [];
  /** What each process reported, in start order. */
  readonly #tallies: ProcessTally[] = [];

  /** Records one message of the current process. */
  record(message: SupervisorMessage): void {
    const tally = this.#tallies.at(-1);
    switch (message.type) {
      case "ready":
        this.#tallies.push({
          isStopped: false,
          progressRequested: 0,
          progress: zeroes(PROGRESS_OUTCOMES),
          answersStarted: 0,
          answers: zeroes(ANSWER_ENDS),
          draftFrames: 0,
          edits: 0,
          lastBatch: [],
        });
        break;
      case "update-handled":
        this.#handled.set(message.updateId, (this.#handled.get(message.updateId) ?? 0) + 1);
        this.#handlingOutcomes[message.outcome]++;
        break;
      case "updates-fetched":
        for (const id of message.updateIds) this.#fetched.set(id, (this.#fetched.get(id) ?? 0) + 1);
        if (tally !== undefined) tally.lastBatch = message.updateIds;
        break;
      case "progress-requested":
        if (tally !== undefined) tally.progressRequested++;
        break;
      case "progress-settled":
        if (tally !== undefined) tally.progress[message.outcome]++;
        break;
      case "answer-started":
        if (tally !== undefined) tally.answersStarted++;
        break;
      case "answer-ended":
        if (tally !== undefined) {
          tally.answers[message.end]++;
          tally.draftFrames += message.draftFrames;
          tally.edits += message.edits;
        }
        break;
      case "job-started":
        this.#started.add(message.jobId);
        break;
      case "job-ended":
        this.#ended.set(message.jobId, message.end);
        break;
      case "job-recovered":
        this.#recovered.set(message.jobId, message.isDelivered);
        break;
      case "chat-reachability":
        if (message.isReachable) this.#unreachable.delete(message.chatId);
        else this.#unreachable.add(message.chatId);
        break;
      case "stats":
        this.#stats[this.#tallies.length - 1] = message.stats;
        if (message.isFinal && tally !== undefined) tally.isStopped = true;
        break;
    }
  }

  /** Whether the bot (its latest process) still writes to the chat. */
  isReachable(chatId: number): boolean {
    return !this.#unreachable.has(chatId);
  }

  /** Processes that reported ready. */
  get processes(): number {
    return this.#tallies.length;
  }

  /** Distinct updates whose processing ended. */
  get updatesHandled(): number {
    return this.#handled.size;
  }

  /** Updates processed more than once (running when a process was killed, then replayed). */
  get updatesRepeated(): number {
    let repeated = 0;
    for (const times of this.#handled.values()) if (times > 1) repeated++;
    return repeated;
  }

  /** Processings that ended, by outcome (an update run again after a crash counts twice). */
  get handlingOutcomes(): Readonly<Record<"succeeded" | "failed" | "timed-out", number>> {
    return { ...this.#handlingOutcomes };
  }

  /** Updates getUpdates returned, and why any came more than once. */
  fetches(): FetchTally {
    // Only a killed process's last batch may come again: it was never confirmed.
    const cutOffBatches = new Set<number>();
    for (const tally of this.#tallies) {
      if (!tally.isStopped) for (const id of tally.lastBatch) cutOffBatches.add(id);
    }
    let fetched = 0;
    let cutOff = 0;
    let unexplained = 0;
    for (const [id, times] of this.#fetched) {
      fetched += times;
      const again = times - 1;
      const explained = cutOffBatches.has(id) ? Math.min(again, 1) : 0;
      cutOff += explained;
      unexplained += again - explained;
    }
    return { fetched, distinct: this.#fetched.size, cutOff, unexplained };
  }

  /** What became of every progress edit, over every process. */
  progressEdits(): ProgressTally {
    const settled = zeroes(PROGRESS_OUTCOMES);
    let requested = 0;
    let cutOff = 0;
    let unaccounted = 0;
    for (const tally of this.#tallies) {
      requested += tally.progressRequested;
      for (const outcome of PROGRESS_OUTCOMES) settled[outcome] += tally.progress[outcome];
      const open = tally.progressRequested - sum(Object.values(tally.progress));
      if (tally.isStopped) unaccounted += open;
      else cutOff += open;
    }
    return { requested, settled, cutOff, unaccounted };
  }

  /** How every /ask answer ended, over every process. */
  answers(): AnswerTally {
    const ended = zeroes(ANSWER_ENDS);
    let asked = 0;
    let cutOff = 0;
    let unaccounted = 0;
    let draftFrames = 0;
    let edits = 0;
    for (const tally of this.#tallies) {
      asked += tally.answersStarted;
      for (const end of ANSWER_ENDS) ended[end] += tally.answers[end];
      const open = tally.answersStarted - sum(Object.values(tally.answers));
      if (tally.isStopped) unaccounted += open;
      else cutOff += open;
      draftFrames += tally.draftFrames;
      edits += tally.edits;
    }
    return { asked, ended, cutOff, unaccounted, draftFrames, edits };
  }

  /** Whether the update's processing ended in some process. */
  wasHandled(updateId: number): boolean {
    return this.#handled.has(updateId);
  }

  /** The counters of every process added up (a killed process's as last reported). */
  stats(): BotStats | undefined {
    return this.#stats.reduce<BotStats | undefined>(
      (sum, stats) => (sum === undefined ? stats : addCounters(sum, stats)),
      undefined,
    );
  }

  /** How every started job ended. */
  jobs(): JobTally {
    const ended: Record<JobEnd, number> = {
      done: 0,
      cancelled: 0,
      interrupted: 0,
      undeliverable: 0,
    };
    // A kill can land after a durable write and before the line that reports it: a recovered
    // job's record proves it started, and its recovery is the ending its user saw last.
    const started = new Set([...this.#started, ...this.#recovered.keys()]);
    let unaccounted = 0;
    for (const id of started) {
      const end = this.#ended.get(id);
      if (this.#recovered.has(id)) continue;
      if (end !== undefined) ended[end]++;
      else unaccounted++;
    }
    let recoveredDelivered = 0;
    for (const isDelivered of this.#recovered.values()) if (isDelivered) recoveredDelivered++;
    return {
      started: started.size,
      ended,
      recovered: this.#recovered.size,
      recoveredDelivered,
      unaccounted,
    };
  }
}

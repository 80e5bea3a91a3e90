// What the demo knows about the bot across its processes: every update handled, every job started
// and how it ended (in the same process, or recovered by the next one after a crash), the chats it
// stopped writing to, and the last counters of each process. The supervisor channel's lines are
// written synchronously, so a process killed with SIGKILL has reported everything it did.

import type { JobEnd } from "../bot-events.js";
import type { BotStats } from "../reference-bot.js";
import type { SupervisorMessage } from "../supervisor-channel.js";

/** How the jobs of every process ended. */
export interface JobTally {
  readonly started: number;
  readonly ended: Readonly<Record<JobEnd, number>>;
  /** Jobs a killed process left running that the next one ended with a message. */
  readonly recovered: number;
  /** Of those, the ones whose message reached the user. */
  readonly recoveredDelivered: number;
  /** Started jobs with no ending at all: lost (0 unless something is wrong). */
  readonly unaccounted: number;
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
  /** The last counters of each process, in start order. */
  readonly #stats: BotStats[] = [];
  #processes = 0;

  /** Records one message of the current process. */
  record(message: SupervisorMessage): void {
    switch (message.type) {
      case "ready":
        this.#processes++;
        break;
      case "update-handled":
        this.#handled.set(message.updateId, (this.#handled.get(message.updateId) ?? 0) + 1);
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
        this.#stats[this.#processes - 1] = message.stats;
        break;
    }
  }

  /** Whether the bot (its latest process) still writes to the chat. */
  isReachable(chatId: number): boolean {
    return !this.#unreachable.has(chatId);
  }

  /** Processes that reported ready. */
  get processes(): number {
    return this.#processes;
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
    let unaccounted = 0;
    for (const id of this.#started) {
      const end = this.#ended.get(id);
      if (end !== undefined) ended[end]++;
      else if (!this.#recovered.has(id)) unaccounted++;
    }
    let recoveredDelivered = 0;
    for (const isDelivered of this.#recovered.values()) if (isDelivered) recoveredDelivered++;
    return {
      started: this.#started.size,
      ended,
      recovered: this.#recovered.size,
      recoveredDelivered,
      unaccounted,
    };
  }
}

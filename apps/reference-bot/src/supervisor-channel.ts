// The child side of the supervisor channel: a bot run by a supervisor (the embedded demo, which
// kills it with SIGKILL and starts it again) reports what it does as JSON lines on a pipe. Each
// line is written synchronously, so whatever the bot reported before it was killed has arrived.

import { writeSync } from "node:fs";
import type { BotEvent } from "./bot-events.js";
import type { BotStats } from "./reference-bot.js";

/** The environment variable naming the channel's file descriptor (internal to the demo). */
export const SUPERVISOR_FD_ENV = "TELEPACE_SUPERVISOR_FD";

/** One line on the channel. */
export type SupervisorMessage =
  | BotEvent
  /** The bot is polling: which journal it runs on, and what an earlier process left in it. */
  | {
      readonly type: "ready";
      readonly pid: number;
      readonly journal: string;
      readonly unfinishedUpdates: number;
      readonly leftoverJobs: number;
      /** Where its metrics are scraped, when it serves them. */
      readonly metricsUrl?: string | undefined;
      /** One of several processes (`--redis`): its name in the shared queue's leases. */
      readonly workerId?: string | undefined;
    }
  /** Every counter, a few times a second and once more after the bot stopped. */
  | { readonly type: "stats"; readonly stats: BotStats; readonly isFinal: boolean };

/** Writes {@link SupervisorMessage}s to a file descriptor, one JSON line each. */
export class SupervisorChannel {
  readonly #fd: number;

  constructor(fd: number) {
    this.#fd = fd;
  }

  /** The channel named by {@link SUPERVISOR_FD_ENV}, or undefined when the bot is not supervised. */
  static fromEnv(env: Readonly<Record<string, string | undefined>>): SupervisorChannel | undefined {
    const raw = env[SUPERVISOR_FD_ENV];
    const fd = raw === undefined ? Number.NaN : Number(raw);
    return Number.isInteger(fd) && fd > 2 ? new SupervisorChannel(fd) : undefined;
  }

  send(message: SupervisorMessage): void {
    writeSync(this.#fd, `${JSON.stringify(message)}\n`);
  }
}

// A peer process's updates as the bench asks about them: how many its bot was handed, how many
// its handler finished and how many of those threw.

import type { Update } from "@grammyjs/types";
import type { Bot } from "grammy";
import type { PeerStats } from "./process-messages.js";

export class UpdateCounter {
  received = 0;
  finished = 0;
  failed = 0;
  /** Failures after this are the run's end dropping what was left, not the bot giving up. */
  isClosed = false;

  /** Hands `update` to `bot` without waiting, counting how it ends. */
  handle(bot: Bot, update: Update): void {
    this.received++;
    bot
      .handleUpdate(update)
      .catch(() => {
        if (!this.isClosed) this.failed++;
      })
      .finally(() => {
        this.finished++;
      });
  }

  /** The process's stats, with its sends as the peer counts them. */
  statsOf(name: string, sends: { readonly settled: number; readonly gaveUp: number }): PeerStats {
    const { received, finished } = this;
    return { name, received, finished, sendsSettled: sends.settled, gaveUp: sends.gaveUp };
  }
}

// A process of a bot run as several whose polling stops for good: a second poller outside the
// bot's Redis makes Telegram answer 409 Conflict. The process then stops as on a signal — its
// running /work jobs ended for their users — and exits 1 with one line naming the cause, never
// the token.

import type { BotApiSim } from "@telepace/bot-api-sim";
import { expect, it } from "vitest";
import { cancelData, eventually, REPLY_TIMEOUT_MS, replyTo, textOf } from "./harness.js";
import { RUNNING, sharedProcesses } from "./shared-processes.js";

const { sim, freshRedis, bot } = sharedProcesses();

/**
 * Polls with the bot's token from outside its Redis until `until` holds: of two parked polls
 * Telegram ends the older with 409, so a poll issued after the bot's ends the bot's.
 */
async function pollAlongside(on: BotApiSim, until: () => boolean): Promise<void> {
  while (!until()) {
    await fetch(`${on.apiRoot}/bot${on.token}/getUpdates?timeout=2`).then((r) => r.arrayBuffer());
  }
}

it(
  "a 409 from a poller outside its Redis: the process ends its jobs and exits 1, saying why",
  async () => {
    const on = await sim();
    const child = bot(on, await freshRedis());
    await child.line(RUNNING);
    const alice = on.users.create({ firstName: "Alice" });
    const chat = on.chats.createPrivate(alice);
    const sent = on.sendCommand(alice, chat, "work", "30");
    const progress = await replyTo(on, chat, sent, (m) => cancelData(m) !== undefined);

    let exitCode: number | null | undefined;
    void child.exited.then((code) => {
      exitCode = code;
    });
    await pollAlongside(on, () => exitCode !== undefined);
    await eventually("the bot exited", () => exitCode !== undefined);
    expect(exitCode).toBe(1);
    expect(on.counters().conflicts).toBeGreaterThan(0);
    // Its running job was ended for Alice, as a shutdown ends it.
    const ending = await replyTo(on, chat, progress, (m) => /^Interrupted/.test(textOf(m)));
    expect(textOf(ending)).toMatch(/^Interrupted, Alice, at \d+%: the bot is shutting down\.$/);
    expect(child.printed.at(-1)).toBe(
      "reference-bot: Polling stopped, so this process stopped (its worker closed, its jobs ended): getUpdates answered 409 Conflict: another process polls with this bot token, or a webhook is set (deleteWebhook removes it). Every process of one bot must poll through the same Redis (the same REDIS_URL).",
    );
    expect(child.printed.join("\n")).not.toContain(on.token);
  },
  REPLY_TIMEOUT_MS * 2,
);

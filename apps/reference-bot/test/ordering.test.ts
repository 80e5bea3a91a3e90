// Per-person order with many people at once: the dispatcher runs different users in parallel but
// one user's updates one after another, and the outbox never lets a chat's sends overtake each
// other — so every user's echoes arrive in the order the user wrote, even past their queue bound.

import type { User } from "@grammyjs/types";
import { describe, expect, it } from "vitest";
import { E2E_TIMEOUT_MS, launchFixture, replyTo, textOf } from "./harness.js";

const USERS = 15;
const MESSAGES = 6;

describe("per-user order", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("echoes each of 15 concurrent users' 6 messages in the order they were sent", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const users: User[] = [];
    for (let u = 0; u < USERS; u++) users.push(sim.users.create({ firstName: `User${u}` }));
    const chats = users.map((user) => sim.chats.createPrivate(user));

    // Everyone writes at once, interleaved: message m of every user before message m + 1 of any.
    for (let m = 0; m < MESSAGES; m++) {
      for (let u = 0; u < USERS; u++) {
        const chat = chats[u] as (typeof chats)[number];
        sim.sendText(users[u] as User, chat, `user ${u} message ${m}`);
      }
    }
    await Promise.all(
      chats.map((chat, u) =>
        replyTo(
          sim,
          chat,
          { message_id: 0 },
          (message) => textOf(message) === `You said: user ${u} message ${MESSAGES - 1}`,
        ),
      ),
    );

    for (const [u, chat] of chats.entries()) {
      const echoes = sim
        .transcript(chat)
        .events.filter((event) => event.actor === "bot" && event.kind === "send")
        .map((event) => event.text);
      const expected = Array.from(
        { length: MESSAGES },
        (_, m) => `You said: user ${u} message ${m}`,
      );
      expect(echoes).toEqual(expected);
      // Each echo answers the message it echoes.
      const replies = sim
        .transcript(chat)
        .messages.filter((message) => message.from?.is_bot === true)
        .map(
          (message) => (message as { reply_to_message?: { text?: string } }).reply_to_message?.text,
        );
      expect(replies).toEqual(expected.map((text) => text.replace("You said: ", "")));
    }
    expect(bot.stats().router.echoes).toBe(USERS * MESSAGES);
    // At Telegram's limits (scaled), a crowd like this earns no 429.
    expect(sim.counters().tooManyRequests).toBe(0);
  });

  it("keeps all of one person's burst, beyond what their queue holds, in order", async () => {
    // 40 messages at once, more than the 32 one person may have waiting: the poller waits for
    // room in the dispatcher instead of dropping the rest.
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const burst = 40;
    for (let m = 0; m < burst; m++) sim.sendText(alice, chat, `burst ${m}`);
    await replyTo(
      sim,
      chat,
      { message_id: 0 },
      (m) => textOf(m) === `You said: burst ${burst - 1}`,
    );
    const echoes = sim
      .transcript(chat)
      .events.filter((event) => event.actor === "bot" && event.kind === "send")
      .map((event) => event.text);
    expect(echoes).toEqual(Array.from({ length: burst }, (_, m) => `You said: burst ${m}`));
    expect(bot.stats().dispatcher.rejected).toEqual({
      "principal-queue-full": 0,
      "active-principals-full": 0,
      "waiting-full": 0,
      closed: 0,
    });
  });
});

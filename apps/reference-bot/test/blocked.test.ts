// A user who blocks the bot: the bot notices, stops writing to that chat (its job ends without
// another call), keeps serving everyone else, and writes again once the user comes back.

import { describe, expect, it } from "vitest";
import {
  cancelData,
  E2E_TIMEOUT_MS,
  eventually,
  launchFixture,
  replyTo,
  textOf,
} from "./harness.js";

describe("a user who blocked the bot", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("is no longer written to, while others are still served", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const bob = sim.users.create({ firstName: "Bob" });
    const aliceChat = sim.chats.createPrivate(alice);
    const bobChat = sim.chats.createPrivate(bob);

    const work = sim.sendCommand(alice, aliceChat, "work", "30");
    await replyTo(sim, aliceChat, work, (m) => cancelData(m) !== undefined);
    await sim.waitForEvent(aliceChat, (event) => event.kind === "edit", { timeoutMs: 20_000 });
    expect(bot.isReachable(aliceChat.id)).toBe(true);
    const bobsJob = sim.sendCommand(bob, bobChat, "work", "1");

    sim.users.block(alice);
    await eventually("the bot notices the block", () => !bot.isReachable(aliceChat.id));
    // The job stops on its own instead of editing into a chat that refuses it.
    await eventually("the job has ended", () => bot.stats().jobs.ended.undeliverable === 1);
    expect(bot.stats().messenger.unreachable).toBe(1);
    const refusalsAfterNoticing = sim.counters().responses["403"] ?? 0;

    // Bob is still served: his job, and a message in the meantime.
    const hello = sim.sendText(bob, bobChat, "still there?");
    expect(textOf(await replyTo(sim, bobChat, hello, () => true))).toBe("You said: still there?");
    const done = await replyTo(sim, bobChat, bobsJob, (m) => textOf(m).startsWith("Done"));
    expect(textOf(done)).toBe("Done, Bob: 1 s of work finished.");
    await bot.stop();

    // Every write into Alice's chat now earns a 403: there was at most the one in flight when
    // she blocked, and none after the bot noticed (not even the job's final message).
    expect(refusalsAfterNoticing).toBeLessThanOrEqual(1);
    expect(sim.counters().responses["403"] ?? 0).toBe(refusalsAfterNoticing);
  });

  it("is written to again after coming back", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    sim.users.block(alice);
    await eventually("the bot notices the block", () => !bot.isReachable(chat.id));

    // A blocked user who writes again has restarted the bot (Telegram unblocks on /start).
    const start = sim.sendCommand(alice, chat, "start");
    await eventually("the bot notices the unblock", () => bot.isReachable(chat.id));
    const reply = await replyTo(sim, chat, start, () => true);
    expect(textOf(reply)).toContain("/work");
  });
});

// A group that becomes a supergroup while a job runs in it: the progress message stays behind in
// the old group, and the final message arrives in the supergroup — once.

import { describe, expect, it } from "vitest";
import {
  cancelData,
  E2E_TIMEOUT_MS,
  eventually,
  launchFixture,
  REPLY_TIMEOUT_MS,
  replyTo,
  textOf,
} from "./harness.js";

describe("group migration", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("delivers a running job's final message in the supergroup", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const bob = sim.users.create({ firstName: "Bob" });
    const group = sim.chats.createGroup({ title: "Team", members: [alice, bob] });
    const work = sim.sendCommand(alice, group, "work", "2");
    const progress = await replyTo(sim, group, work, (m) => cancelData(m) !== undefined);
    await sim.waitForEvent(group, (event) => event.kind === "edit", {
      timeoutMs: REPLY_TIMEOUT_MS,
    });

    const supergroup = sim.chats.migrateToSupergroup(group, { by: alice });
    expect(supergroup.id).not.toBe(group.id);
    const final = await sim.waitForMessage(supergroup, (m) => textOf(m).startsWith("Done"), {
      timeoutMs: REPLY_TIMEOUT_MS,
    });
    expect(textOf(final)).toBe("Done, Alice: 2 s of work finished.");
    await eventually("the job has ended", () => bot.stats().jobs.ended.done === 1);

    // The bot now talks to the supergroup for everything else too.
    const mention = sim.sendText(bob, supergroup, `@${bot.me.username} hi`);
    expect(textOf(await replyTo(sim, supergroup, mention, () => true))).toBe(
      `You said: @${bot.me.username} hi`,
    );
    await bot.stop();

    const finals = sim
      .transcript(supergroup)
      .messages.filter((m) => textOf(m).startsWith("Done, Alice"));
    expect(finals).toHaveLength(1);
    // The old group keeps its progress message (it cannot be replaced there) and no final.
    const old = sim.transcript(group).messages.filter((m) => m.from?.is_bot === true);
    expect(old.map((m) => m.message_id)).toEqual([progress.message_id]);
    expect(bot.stats().messenger.migrations).toBe(1);
  });
});

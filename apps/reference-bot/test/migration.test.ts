// A group that becomes a supergroup while a job runs in it: the progress message stays behind in
// the old group, the final message arrives in the supergroup — once — and nothing in the
// supergroup is deleted in the progress message's place.

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
    const work = sim.sendCommand(alice, group, "work", "1");
    const progress = await replyTo(sim, group, work, (m) => cancelData(m) !== undefined);
    await sim.waitForEvent(group, (event) => event.kind === "edit", {
      timeoutMs: REPLY_TIMEOUT_MS,
    });

    const supergroup = sim.chats.migrateToSupergroup(group, { by: alice });
    expect(supergroup.id).not.toBe(group.id);
    const final = await sim.waitForMessage(supergroup, (m) => textOf(m).startsWith("Done"), {
      timeoutMs: REPLY_TIMEOUT_MS,
    });
    expect(textOf(final)).toBe("Done, Alice: 1 s of work finished.");
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

  it("does not delete the supergroup's message that has the old progress message's id", async () => {
    // The job learns of the migration only from its final send: it makes no progress edit (one
    // step of 1.1 s for a 1 s job), the migrate updates wait behind a slow update (one processor at
    // a time), and the bot is an admin that could delete anything.
    await using fixture = await launchFixture({ bot: { maxConcurrency: 1, progressHz: 0.9 } });
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const bob = sim.users.create({ firstName: "Bob" });
    const group = sim.chats.createGroup({ title: "Team", members: [alice], botsAreAdmins: true });
    const work = sim.sendCommand(alice, group, "work", "1");
    const progress = await replyTo(sim, group, work, (m) => cancelData(m) !== undefined);

    sim.faults.setLatency(2_500, { methods: ["download"] });
    const bobsChat = sim.chats.createPrivate(bob);
    sim.sendDocument(bob, bobsChat, { bytes: new Uint8Array(1000), fileName: "slow.bin" });
    await eventually("the slow update is running", () => (sim.counters().calls.getFile ?? 0) > 0);
    const supergroup = sim.chats.migrateToSupergroup(group, { by: alice });
    let namesake = sim.sendText(alice, supergroup, "a message of Alice's");
    while (namesake.message_id < progress.message_id) {
      namesake = sim.sendText(alice, supergroup, "a message of Alice's");
    }
    expect(namesake.message_id).toBe(progress.message_id);

    const final = await sim.waitForMessage(supergroup, (m) => textOf(m).startsWith("Done"), {
      timeoutMs: REPLY_TIMEOUT_MS,
    });
    expect(textOf(final)).toBe("Done, Alice: 1 s of work finished.");
    await bot.stop();
    expect(sim.transcript(supergroup).events.filter((event) => event.kind === "delete")).toEqual(
      [],
    );
    expect(sim.transcript(supergroup).messages.map((m) => m.message_id)).toContain(
      namesake.message_id,
    );
  });
});

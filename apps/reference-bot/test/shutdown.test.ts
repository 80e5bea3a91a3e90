// Shutdown in the middle of a job: stop() interrupts the job, whose final message is delivered (and
// its progress message cleaned up) before stop resolves; an update in progress finishes, is answered
// and confirmed; polling ends; a second stop does nothing.

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  cancelData,
  E2E_TIMEOUT_MS,
  eventually,
  launchFixture,
  REPLY_TIMEOUT_MS,
  replyTo,
  sha256,
  textOf,
} from "./harness.js";

describe("stop()", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("delivers a running job's final message before it resolves, then does nothing more", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const work = sim.sendCommand(alice, chat, "work", "60");
    const progress = await replyTo(sim, chat, work, (m) => cancelData(m) !== undefined);
    await sim.waitForEvent(chat, (event) => event.kind === "edit", {
      timeoutMs: REPLY_TIMEOUT_MS,
    });
    expect(sim.snapshot().bots[0]?.isPolling).toBe(true);

    const stopping = bot.stop();
    const report = await stopping;

    // Everything happened before stop resolved: no wait for it here.
    const messages = sim.transcript(chat).messages.filter((m) => m.from?.is_bot === true);
    expect(messages).toHaveLength(1);
    const final = textOf(messages[0] as (typeof messages)[number]);
    const percent = Number(
      /^Interrupted, Alice, at (\d+)%: the bot is shutting down\.$/.exec(final)?.[1],
    );
    expect(percent).toBeGreaterThan(0);
    expect(percent).toBeLessThan(100);
    expect(messages[0]?.message_id).not.toBe(progress.message_id);
    expect(bot.stats().jobs).toMatchObject({ running: 0, ended: { interrupted: 1 } });
    expect(report).toEqual({ unfinished: 0 });

    // Polling has ended and the updates are confirmed: nothing is left for a next start.
    await expect(bot.polling).resolves.toBeUndefined();
    expect(sim.snapshot().bots[0]?.isPolling).toBe(false);
    expect(sim.pendingUpdates()).toBe(0);

    // A second stop is the same stop: no new request reaches the sim.
    const calls = sim.counters().requests;
    expect(bot.stop()).toBe(stopping);
    await expect(bot.stop({ timeoutMs: 1 })).resolves.toEqual(report);
    expect(sim.counters().requests).toBe(calls);
  });

  it("lets an update in progress finish, answers it and confirms it before it resolves", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    // A slow download: four 256 KiB ranges, each held back by the sim.
    sim.faults.setLatency(150, { methods: ["download"] });
    const bytes = randomBytes(1024 * 1024);
    const sent = sim.sendDocument(alice, chat, { bytes, fileName: "big.bin" });
    await eventually("the download has begun", () => sim.counters().bytesServed > 0);
    expect(bot.stats().dispatcher.inFlight).toBe(1);

    const report = await bot.stop();
    expect(report).toEqual({ unfinished: 0 });
    const reply = sim
      .transcript(chat)
      .messages.find((m) => m.from?.is_bot === true && m.message_id > sent.message_id);
    expect(reply && textOf(reply)).toBe(`big.bin: ${bytes.length} bytes, SHA-256 ${sha256(bytes)}`);
    // Only a last getUpdates during stop could have confirmed it: no poll carried its offset.
    expect(sim.pendingUpdates()).toBe(0);
  });
});

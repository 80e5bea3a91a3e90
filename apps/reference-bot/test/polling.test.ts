// Long polling through faults that retrying can fix: lost connections and 5xx are backed off
// (doubling) and polling recovers; a 429 on getUpdates is slept out. Nothing is lost either way.

import { describe, expect, it } from "vitest";
import {
  E2E_TIMEOUT_MS,
  eventually,
  launchFixture,
  replyTo,
  TIME_SCALE,
  textOf,
} from "./harness.js";

describe("long polling", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("backs off after failed polls, doubling the wait, and then serves what arrived", async () => {
    await using fixture = await launchFixture();
    const { sim, bot, log } = fixture;
    sim.faults.resetNext("getUpdates", 2);
    sim.faults.failNext("getUpdates", 1, { code: 502 });
    const failedPolls = () =>
      log.records().filter((record) => record.msg === "getUpdates failed; retrying");
    await eventually("a poll has failed", () => failedPolls().length > 0);
    // Written while the bot is backing off; it can only arrive after the last failure.
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const sent = sim.sendText(alice, chat, "anyone?");
    expect(textOf(await replyTo(sim, chat, sent, () => true))).toBe("You said: anyone?");

    const retries = failedPolls();
    expect(retries.map((record) => record.backoffMs)).toEqual([500, 1000, 2000]);
    expect(retries.map((record) => record.failure)).toEqual([
      "connection-lost",
      "connection-lost",
      undefined,
    ]);
    expect(bot.stats().poller.networkErrors).toBe(3);
  });

  it("sleeps out a 429 on getUpdates without counting it as a failure", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    sim.faults.failNext("getUpdates", 2, { code: 429, retryAfter: 5 / TIME_SCALE });
    await eventually("a poll got a 429", () => sim.counters().responses["429"] === 1);
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const sent = sim.sendText(alice, chat, "patience");
    expect(textOf(await replyTo(sim, chat, sent, () => true))).toBe("You said: patience");
    expect(sim.counters().responses["429"]).toBe(2);
    expect(bot.stats().poller.networkErrors).toBe(0);
  });
});

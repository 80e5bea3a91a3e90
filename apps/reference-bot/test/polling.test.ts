// Long polling through faults: those that retrying can fix (lost connections and 5xx are backed
// off, doubling; a 429 is slept out) lose nothing; a 409 cannot be fixed by retrying (another
// instance polls the same token, or a webhook is set), so polling stops with a
// PollingStoppedError that says which, and stop() still works.

import { PollingStoppedError } from "@telepace/update-dispatch";
import { describe, expect, it } from "vitest";
import { ReferenceBot } from "../src/reference-bot.js";
import {
  E2E_TIMEOUT_MS,
  eventually,
  launchFixture,
  REPLY_TIMEOUT_MS,
  replyTo,
  TIME_SCALE,
  textOf,
} from "./harness.js";

describe("long polling", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("backs off after failed polls, doubling the wait, and then serves what arrived", async () => {
    await using fixture = await launchFixture();
    const { sim, bot, log } = fixture;
    sim.faults.resetNext("getUpdates", 1);
    sim.faults.failNext("getUpdates", 1, { code: 502 });
    const failedPolls = () =>
      log
        .records()
        .filter((record) => record.msg === "getUpdates failed; polling again after a delay");
    await eventually("a poll has failed", () => failedPolls().length > 0);
    // Written while the bot is backing off; it can only arrive after the last failure.
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const sent = sim.sendText(alice, chat, "anyone?");
    expect(textOf(await replyTo(sim, chat, sent, () => true))).toBe("You said: anyone?");

    const retries = failedPolls();
    expect(retries.map((record) => record.delayMs)).toEqual([500, 1000]);
    expect(retries.map((record) => [record.reason, record.code, record.errorCode])).toEqual([
      ["transient", "ERR_NETWORK", undefined],
      ["transient", "ERR_TELEGRAM_API", 502],
    ]);
    expect(bot.stats().intake.backoffs).toBe(2);
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
    expect(bot.stats().intake.backoffs).toBe(0);
  });
});

/** The error `bot.polling` rejects with (failing the test if polling ends another way). */
async function pollingError(bot: ReferenceBot): Promise<unknown> {
  return bot.polling.then(
    () => {
      throw new Error("polling ended without an error");
    },
    (error: unknown) => error,
  );
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out waiting for ${what}`)), REPLY_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe("409 Conflict", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("stops polling when a second instance polls the same token", async () => {
    await using first = await launchFixture();
    const { sim } = first;
    const rival = await ReferenceBot.launch({
      token: sim.token,
      apiRoot: sim.apiRoot,
      logger: first.logger,
      pollTimeoutS: 1,
    });
    try {
      const error = await withTimeout(
        Promise.race([pollingError(first.bot), pollingError(rival)]),
        "a 409",
      );
      expect(error).toBeInstanceOf(PollingStoppedError);
      expect((error as Error).message).toBe(
        "getUpdates answered 409 Conflict: another process polls with this bot token, or a webhook is set (deleteWebhook removes it)",
      );
      expect(sim.counters().conflicts).toBeGreaterThanOrEqual(1);
      // The instance that lost stopped polling; the other one still serves.
      const alice = sim.users.create({ firstName: "Alice" });
      const chat = sim.chats.createPrivate(alice);
      const sent = sim.sendText(alice, chat, "who is there?");
      const reply = await sim.waitForMessage(chat, undefined, {
        afterMessageId: sent.message_id,
        timeoutMs: REPLY_TIMEOUT_MS,
      });
      expect("text" in reply && reply.text).toBe("You said: who is there?");
    } finally {
      await rival.stop();
    }
  });

  it("stops polling when a webhook is set", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const response = await fetch(
      `${sim.apiRoot}/bot${sim.token}/setWebhook?url=${encodeURIComponent("https://example.com/hook")}`,
    );
    expect(await response.json()).toMatchObject({ ok: true, result: true });
    const error = await withTimeout(pollingError(bot), "a 409");
    expect(error).toBeInstanceOf(PollingStoppedError);
    expect((error as Error).message).toMatch(/409 Conflict: .*a webhook is set/);
    expect(sim.counters().conflicts).toBeGreaterThanOrEqual(1);
    // stop() still shuts the rest down and resolves.
    await expect(bot.stop()).resolves.toEqual({ unfinished: 0 });
  });
});

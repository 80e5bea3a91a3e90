// A 409 from getUpdates cannot be fixed by retrying: another instance polls the same token, or a
// webhook is set. Polling stops with a PollingStoppedError that says which, and stop() still works.

import { describe, expect, it } from "vitest";
import { PollingStoppedError } from "../src/long-poller.js";
import { ReferenceBot } from "../src/reference-bot.js";
import { E2E_TIMEOUT_MS, launchFixture, REPLY_TIMEOUT_MS } from "./harness.js";

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
        "getUpdates answered 409 Conflict: another instance of this bot is polling, or a webhook is set (deleteWebhook removes it)",
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
    await expect(bot.stop()).resolves.toEqual({ unstarted: 0, interrupted: 0 });
  });
});

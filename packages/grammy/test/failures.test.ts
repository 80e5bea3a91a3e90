// Failed envelopes and network failures through the transformer, against the sim: 429 storms
// freeze only their chat, 5xx are retried only where a repeat cannot duplicate a message, "not
// modified" is success, a blocked chat fails once for all its pending calls.

import { eventually } from "@telepace/testing";
import { GrammyError, HttpError } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { type Fixture, fixture } from "./support.js";

let f: Fixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

function texts(fx: Fixture, chatId: number): string[] {
  return fx.sim
    .transcript(chatId)
    .messages.map((message) => ("text" in message ? (message.text ?? "") : ""));
}

describe("429 storms", () => {
  it("the app sees no 429, and only the offending chat waits", async () => {
    // No per-chat pacing: the burst into one chat runs into Telegram's limit on purpose.
    f = await fixture({ privateChatRps: 0 });
    const { sim, bot } = f;
    const stormy = sim.chats.createPrivate(sim.users.create());
    const calm = sim.chats.createPrivate(sim.users.create());
    const doneAt = new Map<string, number>();
    const send = (chatId: number, text: string) =>
      bot.api.sendMessage(chatId, text).then((message) => {
        doneAt.set(text, performance.now());
        return message;
      });
    const storm = Array.from({ length: 8 }, (_, i) => send(stormy.id, `storm ${i}`));
    await eventually("the storm is queued first", () =>
      expect(f?.pace.snapshot().counters.enqueued).toBe(8),
    );
    const quiet = [send(calm.id, "calm 0"), send(calm.id, "calm 1")];
    const results = await Promise.allSettled([...storm, ...quiet]);

    expect(results.every((result) => result.status === "fulfilled")).toBe(true);
    const counters = sim.counters();
    expect(counters.tooManyRequests).toBeGreaterThan(0);
    expect(Object.keys(counters.tooManyRequestsByChat)).toEqual([String(stormy.id)]);
    expect(texts(f, stormy.id)).toEqual(Array.from({ length: 8 }, (_, i) => `storm ${i}`));
    expect(texts(f, calm.id)).toEqual(["calm 0", "calm 1"]);
    // The calm chat was not frozen with the stormy one: it finished before the storm did.
    expect(doneAt.get("calm 1")).toBeLessThan(doneAt.get("storm 7") as number);
    expect(f.pace.snapshot().counters.rateLimited).toBeGreaterThan(0);
  });

  it("a retry_after above maxRetryAfterMs is handed back as the 429 GrammyError", async () => {
    f = await fixture({ maxRetryAfterMs: 1_000 });
    const chat = f.sim.chats.createPrivate(f.sim.users.create());
    f.sim.faults.failNext("sendMessage", 1, { code: 429, retryAfter: 60 });
    const error = await f.bot.api.sendMessage(chat.id, "later").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GrammyError);
    expect(error).toMatchObject({ error_code: 429, parameters: { retry_after: 60 } });
  });
});

describe("5xx and network failures", () => {
  it("retries a 5xx on an edit and a reset on a delete", async () => {
    f = await fixture();
    const { sim, bot } = f;
    const chat = sim.chats.createPrivate(sim.users.create());
    const sent = await bot.api.sendMessage(chat.id, "v1");
    sim.faults.failNext("editMessageText", 2, { code: 502 });
    const edited = await bot.api.editMessageText(chat.id, sent.message_id, "v2");
    expect(edited).toMatchObject({ text: "v2" });
    sim.faults.resetNext("deleteMessage", 1);
    expect(await bot.api.deleteMessage(chat.id, sent.message_id)).toBe(true);
    expect(sim.counters().calls).toMatchObject({ editMessageText: 3, deleteMessage: 2 });
  });

  it("never resends a send whose request may have reached Telegram", async () => {
    f = await fixture();
    const { sim, bot } = f;
    const chat = sim.chats.createPrivate(sim.users.create());
    sim.faults.failNext("sendMessage", 1, { code: 502, afterProcessing: true });
    const bad = await bot.api.sendMessage(chat.id, "first").catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(GrammyError);
    expect(bad).toMatchObject({ error_code: 502 });
    sim.faults.resetNext("sendMessage", 1, { afterProcessing: true });
    const lost = await bot.api.sendMessage(chat.id, "second").catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(HttpError);
    expect(sim.counters().calls.sendMessage).toBe(2);
    // Both arrived once: the answers were lost, the messages were not duplicated.
    expect(texts(f, chat.id)).toEqual(["first", "second"]);
    expect(f.pace.snapshot().counters.failed).toBe(2);
  });
});

describe("envelopes the outbox understands", () => {
  it("'message is not modified' resolves true instead of throwing", async () => {
    f = await fixture();
    const chat = f.sim.chats.createPrivate(f.sim.users.create());
    const sent = await f.bot.api.sendMessage(chat.id, "same");
    expect(await f.bot.api.editMessageText(chat.id, sent.message_id, "same")).toBe(true);
    expect(f.pace.snapshot().counters.notModified).toBe(1);
  });

  it("a blocked chat fails its pending calls with the same 403, for one API call", async () => {
    f = await fixture();
    const { sim, bot } = f;
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    await bot.api.sendMessage(chat.id, "before");
    sim.users.block(user);
    const results = await Promise.allSettled(
      ["a", "b", "c"].map((text) => bot.api.sendMessage(chat.id, text)),
    );
    for (const result of results) {
      expect(result.status).toBe("rejected");
      const reason = (result as PromiseRejectedResult).reason;
      expect(reason).toBeInstanceOf(GrammyError);
      expect(reason).toMatchObject({ error_code: 403 });
    }
    expect(sim.counters().calls.sendMessage).toBe(2);
  });
});

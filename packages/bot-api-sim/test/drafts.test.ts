// sendMessageDraft over real HTTP: private chats only, the same draft id animates and a new one
// replaces, empty text is "Thinking…", parse modes and entities as in sendMessage, 30 s expiry,
// any bot message removes the draft, the user's Stop button, and the draft flood limit.

import type { Update } from "@grammyjs/types";
import { ManualClock } from "@telepace/core";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, type BotApiSimOptions, start } from "../src/index.js";
import { call, control, expectTooManyRequests } from "./helpers.js";

let sim: BotApiSim;
afterEach(() => sim?.close());

async function setup(options: BotApiSimOptions = { rateLimits: false }) {
  sim = await start(options);
  const user = sim.users.create({ firstName: "Dana" });
  const chat = sim.chats.createPrivate(user);
  return { user, chat };
}

function draft(chatId: number, draftId: number, params: Record<string, unknown> = {}) {
  return call(sim, "sendMessageDraft", { chat_id: chatId, draft_id: draftId, ...params });
}

async function updates(): Promise<Update[]> {
  return (await call(sim, "getUpdates", { offset: -100 })).body.result as Update[];
}

describe("sendMessageDraft", () => {
  it("shows a draft; the same id animates it and a new id replaces it", async () => {
    const { chat } = await setup();
    expect((await draft(chat.id, 7, { text: "Hel" })).body).toEqual({ ok: true, result: true });
    expect(sim.transcript(chat).draft).toMatchObject({ draftId: 7, text: "Hel", frames: 1 });
    await draft(chat.id, 7, { text: "Hello" });
    await draft(chat.id, 8, { text: "Other" });
    const { events, draft: shown, messages } = sim.transcript(chat);
    expect(
      events.map((event) => [event.kind, event.draftId, event.draftChange, event.text]),
    ).toEqual([
      ["draft", 7, "start", "Hel"],
      ["draft", 7, "update", "Hello"],
      ["draft", 8, "replace", "Other"],
    ]);
    for (const event of events) {
      expect(event).toMatchObject({
        actor: "bot",
        actorId: sim.bot.id,
        method: "sendMessageDraft",
      });
      expect(event.atMs).toEqual(expect.any(Number));
      expect(event.date).toEqual(expect.any(Number));
    }
    expect(shown).toMatchObject({ draftId: 8, text: "Other", frames: 1, hasStopButton: false });
    expect(messages).toEqual([]);
    expect(Object.isFrozen(shown)).toBe(true);
    const counters = sim.counters();
    expect(counters.draftFrames).toBe(3);
    expect(counters.calls.sendMessageDraft).toBe(3);
    expect(counters.messagesSent).toBe(0);
  });

  it("accepts empty text (the Thinking… placeholder) and formats text like sendMessage", async () => {
    const { chat } = await setup();
    expect((await draft(chat.id, 1)).status).toBe(200);
    expect(sim.transcript(chat).draft?.text).toBe("");
    await draft(chat.id, 1, { text: "  \n " });
    expect(sim.transcript(chat).draft?.text).toBe("");
    await draft(chat.id, 1, { text: "<b>bold</b> move", parse_mode: "HTML" });
    expect(sim.transcript(chat).draft).toMatchObject({
      text: "bold move",
      entities: [{ type: "bold", offset: 0, length: 4 }],
    });
    await draft(chat.id, 1, {
      text: "see it",
      entities: [{ type: "italic", offset: 4, length: 2 }],
    });
    expect(sim.transcript(chat).draft?.entities).toEqual([
      { type: "italic", offset: 4, length: 2 },
    ]);
    const broken = await draft(chat.id, 1, { text: "<b>open", parse_mode: "HTML" });
    expect(broken.status).toBe(400);
    expect(broken.body.description).toMatch(/^Bad Request: can't parse entities: /);
    const long = await draft(chat.id, 1, { text: "x".repeat(4097) });
    expect(long.body).toEqual({
      ok: false,
      error_code: 400,
      description: "Bad Request: message is too long",
    });
    expect((await draft(chat.id, 1, { text: "x".repeat(4096) })).status).toBe(200);
  });

  it("answers Telegram's errors for other chats, a zero draft id and closed chats", async () => {
    const { user, chat } = await setup();
    const group = sim.chats.createGroup({ members: [user] });
    const cases: [Record<string, unknown>, number, string][] = [
      [{ chat_id: group.id, draft_id: 1, text: "x" }, 400, "Bad Request: TEXTDRAFT_PEER_INVALID"],
      [{ chat_id: chat.id, text: "x" }, 400, "Bad Request: RANDOM_ID_INVALID"],
      [{ chat_id: chat.id, draft_id: 0, text: "x" }, 400, "Bad Request: RANDOM_ID_INVALID"],
      [{ draft_id: 1, text: "x" }, 400, "Bad Request: chat_id is empty"],
      [{ chat_id: 123456, draft_id: 1, text: "x" }, 400, "Bad Request: chat not found"],
    ];
    for (const [params, status, description] of cases) {
      const reply = await call(sim, "sendMessageDraft", params);
      expect(reply.body).toEqual({ ok: false, error_code: status, description });
    }
    sim.users.block(user);
    expect((await draft(chat.id, 1, { text: "x" })).body.description).toBe(
      "Forbidden: bot was blocked by the user",
    );
    expect(sim.counters().draftFrames).toBe(0);
  });

  it("takes 64-bit draft ids and keeps message_thread_id", async () => {
    const { chat } = await setup();
    const big = 123_456_789 * 256;
    await draft(chat.id, big, { text: "x", message_thread_id: 42 });
    expect(sim.transcript(chat).draft).toMatchObject({ draftId: big, messageThreadId: 42 });
  });

  it("disappears 30 s after the last write, and when the bot sends any message", async () => {
    const clock = new ManualClock();
    const { user, chat } = await setup({ rateLimits: false, clock });
    await draft(chat.id, 3, { text: "a" });
    await clock.advance(20_000);
    await draft(chat.id, 3, { text: "ab" });
    await clock.advance(29_999);
    expect(sim.transcript(chat).draft).toMatchObject({
      text: "ab",
      startedAtMs: 0,
      updatedAtMs: 20_000,
      expiresAtMs: 50_000,
    });
    await clock.advance(1);
    expect(sim.transcript(chat).draft).toBeUndefined();
    // After expiry the same id starts a fresh draft.
    await draft(chat.id, 3, { text: "again" });
    expect(sim.transcript(chat).events.at(-1)?.draftChange).toBe("start");
    // The user's own message, the bot's edits and a failed send keep it; the bot's message removes it.
    sim.sendText(user, chat, "still there?");
    const earlier = (await call(sim, "sendMessage", { chat_id: chat.id, text: "v1" })).body.result;
    await draft(chat.id, 3, { text: "again" });
    await call(sim, "editMessageText", {
      chat_id: chat.id,
      message_id: earlier.message_id,
      text: "v2",
    });
    expect((await call(sim, "sendMessage", { chat_id: chat.id, text: "" })).status).toBe(400);
    expect(sim.transcript(chat).draft?.text).toBe("again");
    await call(sim, "sendMessage", { chat_id: chat.id, text: "final answer" });
    expect(sim.transcript(chat).draft).toBeUndefined();
  });
});

describe("the Stop button", () => {
  it("sends the bot stopped_message_generation and removes the draft", async () => {
    const { user, chat } = await setup();
    await draft(chat.id, 11, { text: "long answer", can_stop: true });
    expect(sim.transcript(chat).draft?.hasStopButton).toBe(true);
    const stopped = sim.stopDraft(user, chat);
    expect(stopped).toEqual({ chat: sim.chats.get(chat), draft_id: 11 });
    const [update] = await updates();
    expect(update?.stopped_message_generation).toEqual({
      chat: { id: chat.id, type: "private", first_name: "Dana" },
      draft_id: 11,
    });
    expect(sim.transcript(chat).draft).toBeUndefined();
    expect(sim.transcript(chat).events.at(-1)).toMatchObject({
      kind: "draft_stop",
      actor: "user",
      actorId: user.id,
      draftId: 11,
    });
    expect(() => sim.stopDraft(user, chat)).toThrow(
      expect.objectContaining({ code: "ERR_INVALID_STATE" }),
    );
    expect(sim.counters().draftsStopped).toBe(1);
  });

  it("keeps the draft without its button with keep_on_stop; a later write shows it again", async () => {
    const { user, chat } = await setup();
    await draft(chat.id, 5, {
      text: "part",
      can_stop: true,
      keep_on_stop: true,
      message_thread_id: 9,
    });
    expect(sim.stopDraft(user, chat)).toMatchObject({ message_thread_id: 9, draft_id: 5 });
    expect(sim.transcript(chat).draft).toMatchObject({
      text: "part",
      hasStopButton: false,
      isStopped: true,
    });
    expect(() => sim.stopDraft(user, chat)).toThrow(
      expect.objectContaining({ code: "ERR_NO_SUCH_BUTTON" }),
    );
    await draft(chat.id, 5, { text: "part two", can_stop: true });
    expect(sim.transcript(chat).draft).toMatchObject({ hasStopButton: true, isStopped: false });
    expect((await updates()).filter((u) => u.stopped_message_generation)).toHaveLength(1);
  });

  it("is absent without can_stop, and only the chat's user can press it", async () => {
    const { user, chat } = await setup();
    const other = sim.users.create();
    await draft(chat.id, 2, { text: "no button" });
    expect(() => sim.stopDraft(user, chat)).toThrow(
      expect.objectContaining({ code: "ERR_NO_SUCH_BUTTON" }),
    );
    await draft(chat.id, 2, { text: "button", can_stop: true });
    expect(() => sim.stopDraft(other, chat)).toThrow(
      expect.objectContaining({ code: "ERR_NOT_A_MEMBER" }),
    );
    expect(() => sim.stopDraft(user, chat, { bots: 1 } as never)).toThrow("did you mean `bot`?");
    expect(await updates()).toEqual([]);
  });

  it("is pressed through the HTTP control API too", async () => {
    const { user, chat } = await setup();
    await draft(chat.id, 4, { text: "x", can_stop: true });
    const reply = await control(sim, "/drafts/stop", { user_id: user.id, chat_id: chat.id });
    expect(reply.body).toEqual({
      ok: true,
      result: { chat: { id: chat.id, type: "private", first_name: "Dana" }, draft_id: 4 },
    });
    const again = await control(sim, "/drafts/stop", { user_id: user.id, chat_id: chat.id });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ ok: false, code: "ERR_INVALID_STATE" });
    const transcript = await control(sim, `/transcript?chat_id=${chat.id}`);
    expect(transcript.body.result.events.map((e: { kind: string }) => e.kind)).toEqual([
      "draft",
      "draft_stop",
    ]);
  });
});

describe("the draft flood limit", () => {
  it("answers 429 with retry_after beyond draftBurst, and leaves messages alone", async () => {
    const clock = new ManualClock();
    const { chat } = await setup({ clock });
    for (let i = 0; i < 5; i++)
      expect((await draft(chat.id, 1, { text: `${i}` })).status).toBe(200);
    const refused = await draft(chat.id, 1, { text: "too fast" });
    expectTooManyRequests(refused, 1);
    expect(sim.transcript(chat).draft?.text).toBe("4");
    expect((await call(sim, "sendMessage", { chat_id: chat.id, text: "m" })).status).toBe(200);
    await clock.advance(200);
    expect((await draft(chat.id, 1, { text: "paced" })).status).toBe(200);
    expect(sim.counters().tooManyRequestsByChat[String(chat.id)]).toBe(1);
  });

  it("is configurable, and off with the other limits", async () => {
    const clock = new ManualClock();
    const { chat } = await setup({ clock, rateLimits: { draftsPerSecond: 1, draftBurst: 1 } });
    expect((await draft(chat.id, 1, { text: "a" })).status).toBe(200);
    expect((await draft(chat.id, 1, { text: "b" })).status).toBe(429);
    sim.setRateLimits({ draftBurst: 50 });
    expect(sim.rateLimits).toMatchObject({ draftsPerSecond: 5, draftBurst: 50 });
    for (let i = 0; i < 50; i++)
      expect((await draft(chat.id, 1, { text: `${i}` })).status).toBe(200);
    sim.setRateLimits(false);
    for (let i = 0; i < 100; i++)
      expect((await draft(chat.id, 1, { text: `${i}` })).status).toBe(200);
  });

  it("lifts with draftsPerSecond: false while the documented limits stay", async () => {
    const clock = new ManualClock();
    const { chat } = await setup({ clock, rateLimits: { draftsPerSecond: false } });
    for (let i = 0; i < 200; i++)
      expect((await draft(chat.id, 1, { text: `${i}` })).status).toBe(200);
    expect(sim.sendBudget(chat)).toMatchObject({ drafts: undefined });
    for (let i = 0; i < 3; i++)
      expect((await call(sim, "sendMessage", { chat_id: chat.id, text: `${i}` })).status).toBe(200);
    expectTooManyRequests(await call(sim, "sendMessage", { chat_id: chat.id, text: "4th" }), 1);
    expect(sim.counters().tooManyRequests).toBe(1);
    const lifted = await control(sim, "/rate-limits", { drafts_per_second: false });
    expect(lifted.body.result).toMatchObject({ draftsPerSecond: false });
    const set = await control(sim, "/rate-limits", { drafts_per_second: 2 });
    expect(set.body.result).toMatchObject({ draftsPerSecond: 2 });
  });
});

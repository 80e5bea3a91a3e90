// The programmatic control API: users and chats, what users do (text, commands, edits, button
// presses, member changes, blocking), privacy mode, group migration, waiting for the bot, the
// transcript, counters and the snapshot.

import type { Update } from "@grammyjs/types";
import { ManualClock } from "@telepace/core";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, type BotApiSimError, start } from "../src/index.js";
import { call } from "./helpers.js";

let sim: BotApiSim;

async function setup(options: Parameters<typeof start>[0] = {}) {
  sim = await start({ rateLimits: false, ...options });
}

afterEach(() => sim?.close());

/** Takes every pending update of a bot (confirming them). */
async function drain(token = sim.token): Promise<Update[]> {
  const updates: Update[] = (await call(sim, "getUpdates", { offset: -100 }, { token })).body
    .result;
  const last = updates.at(-1);
  if (last !== undefined)
    await call(sim, "getUpdates", { offset: last.update_id + 1, limit: 1 }, { token });
  return updates;
}

function kinds(updates: Update[]): string[] {
  return updates.map((update) => Object.keys(update).find((key) => key !== "update_id") as string);
}

const code = (c: string) => expect.objectContaining({ code: c }) as BotApiSimError;

describe("users", () => {
  it("creates users with unique increasing ids and Telegram-shaped objects", async () => {
    await setup();
    const alice = sim.users.create({
      firstName: "Alice",
      lastName: "A",
      username: "alice_a",
      languageCode: "de",
    });
    const bob = sim.users.create();
    expect(alice).toEqual({
      id: expect.any(Number),
      is_bot: false,
      first_name: "Alice",
      last_name: "A",
      username: "alice_a",
      language_code: "de",
    });
    expect(bob.id).toBeGreaterThan(alice.id);
    expect(sim.users.get(alice.id)).toBe(alice);
    expect(Object.isFrozen(alice)).toBe(true);
  });

  it("validates names with the house message", async () => {
    await setup();
    expect(() => sim.users.create({ username: "no" })).toThrow(RangeError);
    expect(() => sim.users.create({ firstName: "" })).toThrow(
      "Expected `firstName` to be a string of 1–64 characters",
    );
    expect(() => sim.sendText(424242, 1, "x")).toThrow(code("ERR_UNKNOWN_USER"));
  });
});

describe("private chats", () => {
  it("delivers a user's text and commands with their entities", async () => {
    await setup();
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    sim.sendCommand(user, chat, "start", "ref42");
    sim.sendText(user, chat, "hello");
    const updates = await drain();
    expect(updates[0]?.message).toMatchObject({
      text: "/start ref42",
      entities: [{ type: "bot_command", offset: 0, length: 6 }],
      from: user,
      chat: { id: user.id, type: "private" },
    });
    expect(updates[1]?.message?.text).toBe("hello");
  });

  it("a chat the user never opened refuses the bot until the user writes", async () => {
    await setup();
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user, { started: false });
    expect((await call(sim, "sendMessage", { chat_id: chat.id, text: "hi" })).status).toBe(403);
    sim.sendText(user, chat, "hi bot");
    expect((await call(sim, "sendMessage", { chat_id: chat.id, text: "hi" })).status).toBe(200);
  });

  it("blocking: my_chat_member, then 403 bot was blocked; writing again restarts the bot", async () => {
    await setup();
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    sim.users.block(user);
    expect(sim.users.isBlocked(user)).toBe(true);
    const blocked = await drain();
    expect(blocked[0]?.my_chat_member).toMatchObject({
      chat: { id: user.id },
      from: user,
      old_chat_member: { status: "member", user: { id: sim.bot.id } },
      new_chat_member: { status: "kicked", until_date: 0 },
    });
    const refused = await call(sim, "sendMessage", { chat_id: chat.id, text: "still there?" });
    expect(refused.body).toEqual({
      ok: false,
      error_code: 403,
      description: "Forbidden: bot was blocked by the user",
    });
    sim.sendText(user, chat, "/start");
    expect(kinds(await drain())).toEqual(["my_chat_member", "message"]);
    expect(sim.users.isBlocked(user)).toBe(false);
    expect(
      (await call(sim, "sendMessage", { chat_id: chat.id, text: "welcome back" })).status,
    ).toBe(200);
  });

  it("edits: the bot gets edited_message", async () => {
    await setup();
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const sent = sim.sendText(user, chat, "typo");
    const edited = sim.editText(user, chat, sent.message_id, "fixed");
    expect(edited).toMatchObject({
      message_id: sent.message_id,
      text: "fixed",
      edit_date: expect.any(Number),
    });
    const updates = await drain();
    expect(updates[1]?.edited_message).toMatchObject({
      message_id: sent.message_id,
      text: "fixed",
    });
    expect(sim.transcript(chat).messages).toEqual([edited]);
  });

  it("documents and photos from users arrive with file ids", async () => {
    await setup();
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    sim.sendDocument(
      user,
      chat,
      { bytes: Buffer.from("a,b\n1,2\n"), fileName: "data.csv" },
      { caption: "numbers" },
    );
    const [update] = await drain();
    expect(update?.message).toMatchObject({
      caption: "numbers",
      document: { file_name: "data.csv", mime_type: "text/csv", file_size: 8 },
    });
  });
});

describe("groups and privacy mode", () => {
  it("creating a group sends my_chat_member and group_chat_created", async () => {
    await setup();
    const [a, b] = [sim.users.create(), sim.users.create()];
    const group = sim.chats.createGroup({ title: "Team", members: [a, b] });
    expect(group).toMatchObject({ type: "group", title: "Team" });
    const updates = await drain();
    expect(kinds(updates)).toEqual(["my_chat_member", "message"]);
    expect(updates[0]?.my_chat_member?.new_chat_member.status).toBe("member");
    expect(updates[1]?.message).toMatchObject({ group_chat_created: true, from: a });
    expect(sim.chats.memberStatus(group, a)).toBe("creator");
    expect(sim.chats.memberStatus(group, b)).toBe("member");
  });

  it("a bot in privacy mode sees commands, mentions and replies only", async () => {
    await setup();
    const user = sim.users.create();
    const group = sim.chats.createGroup({ members: [user] });
    await drain();
    sim.sendText(user, group, "plain chatter");
    sim.sendText(user, group, "/help");
    sim.sendText(user, group, "/help@other_bot");
    sim.sendText(user, group, `/help@${sim.bot.username}`);
    sim.sendText(user, group, `hey @${sim.bot.username}`);
    const botMessage = (await call(sim, "sendMessage", { chat_id: group.id, text: "I am here" }))
      .body.result;
    sim.sendText(user, group, "replying", { replyTo: botMessage.message_id });
    const texts = (await drain()).map((update) => update.message?.text);
    expect(texts).toEqual([
      "/help",
      `/help@${sim.bot.username}`,
      `hey @${sim.bot.username}`,
      "replying",
    ]);
    expect(sim.transcript(group).messages).toHaveLength(8);
  });

  it("administrators and bots without privacy mode see everything", async () => {
    await setup({ bots: [{}, { canReadAllGroupMessages: true }] });
    const user = sim.users.create();
    const group = sim.chats.createGroup({ members: [user], bots: [sim.bots[0]?.id as number] });
    sim.chats.setBotAdmin(group, true);
    sim.chats.addBot(group, { bot: sim.bots[1]?.id as number });
    await drain(sim.tokens[0]);
    await drain(sim.tokens[1]);
    sim.sendText(user, group, "plain");
    expect((await drain(sim.tokens[0])).map((u) => u.message?.text)).toEqual(["plain"]);
    expect((await drain(sim.tokens[1])).map((u) => u.message?.text)).toEqual(["plain"]);
  });

  it("member changes become service messages (and chat_member for admin bots)", async () => {
    await setup();
    const owner = sim.users.create();
    const group = sim.chats.createSupergroup({ members: [owner], botsAreAdmins: true });
    await call(sim, "getUpdates", {
      offset: -1,
      allowed_updates: ["message", "chat_member", "my_chat_member"],
    });
    await drain();
    const guest = sim.users.create();
    sim.chats.addMember(group, guest, { by: owner });
    sim.chats.removeMember(group, guest, { by: owner, ban: true });
    const updates = await drain();
    expect(kinds(updates)).toEqual(["chat_member", "message", "chat_member", "message"]);
    expect(updates[1]?.message).toMatchObject({ new_chat_members: [guest], from: owner });
    expect(updates[2]?.chat_member?.new_chat_member.status).toBe("kicked");
    expect(updates[3]?.message).toMatchObject({ left_chat_member: guest });
    expect(() => sim.sendText(guest, group, "hi")).toThrow(code("ERR_NOT_A_MEMBER"));
  });

  it("a removed or banned bot gets my_chat_member and 403s afterwards", async () => {
    await setup();
    const owner = sim.users.create();
    const group = sim.chats.createGroup({ members: [owner] });
    const supergroup = sim.chats.createSupergroup({ members: [owner] });
    await drain();
    sim.chats.removeBot(group);
    sim.chats.removeBot(supergroup, { ban: true });
    const updates = await drain();
    expect(updates.map((u) => u.my_chat_member?.new_chat_member.status)).toEqual([
      "left",
      "kicked",
    ]);
    expect(
      (await call(sim, "sendMessage", { chat_id: group.id, text: "x" })).body.description,
    ).toBe("Forbidden: bot is not a member of the group chat");
    expect(
      (await call(sim, "sendMessage", { chat_id: supergroup.id, text: "x" })).body.description,
    ).toBe("Forbidden: bot was kicked from the supergroup chat");
    sim.chats.addBot(group, { by: owner });
    expect((await call(sim, "sendMessage", { chat_id: group.id, text: "back" })).status).toBe(200);
  });

  it("migration: migrate_to/migrate_from messages and 400 with migrate_to_chat_id", async () => {
    await setup();
    const owner = sim.users.create();
    const group = sim.chats.createGroup({ title: "Growing", members: [owner] });
    await drain();
    const supergroup = sim.chats.migrateToSupergroup(group);
    expect(supergroup).toMatchObject({ type: "supergroup", title: "Growing" });
    const updates = await drain();
    expect(updates.map((u) => u.message)).toEqual([
      expect.objectContaining({
        chat: expect.objectContaining({ id: group.id }),
        migrate_to_chat_id: supergroup.id,
      }),
      expect.objectContaining({
        chat: expect.objectContaining({ id: supergroup.id }),
        migrate_from_chat_id: group.id,
      }),
    ]);
    const old = await call(sim, "sendMessage", { chat_id: group.id, text: "hello?" });
    expect(old.body).toEqual({
      ok: false,
      error_code: 400,
      description: "Bad Request: group chat was upgraded to a supergroup chat",
      parameters: { migrate_to_chat_id: supergroup.id },
    });
    expect(
      (await call(sim, "sendMessage", { chat_id: supergroup.id, text: "hello!" })).status,
    ).toBe(200);
    expect(() => sim.sendText(owner, group, "old")).toThrow(code("ERR_INVALID_STATE"));
    expect(() => sim.chats.migrateToSupergroup(group)).toThrow(code("ERR_INVALID_STATE"));
  });
});

describe("buttons", () => {
  it("a press becomes a callback_query; the answer is recorded once", async () => {
    await setup();
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const markup = { inline_keyboard: [[{ text: "Yes", callback_data: "vote:yes" }]] };
    const message = (
      await call(sim, "sendMessage", { chat_id: chat.id, text: "Vote?", reply_markup: markup })
    ).body.result;
    const query = sim.pressButton(user, chat, message.message_id, "vote:yes");
    const [update] = await drain();
    expect(update?.callback_query).toEqual({
      id: query.id,
      from: user,
      message,
      chat_instance: expect.any(String),
      data: "vote:yes",
    });
    expect(sim.callbackAnswer(query.id)).toBeUndefined();
    const answered = sim.waitForCallbackAnswer(query.id);
    await call(sim, "answerCallbackQuery", {
      callback_query_id: query.id,
      text: "Counted",
      show_alert: true,
    });
    expect(await answered).toMatchObject({ text: "Counted", showAlert: true });
    const twice = await call(sim, "answerCallbackQuery", { callback_query_id: query.id });
    expect(twice.body.description).toBe(
      "Bad Request: query is too old and response timeout expired or query ID is invalid",
    );
  });

  it("refuses a press of a button that is not there", async () => {
    await setup();
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const message = (await call(sim, "sendMessage", { chat_id: chat.id, text: "no buttons" })).body
      .result;
    expect(() => sim.pressButton(user, chat, message.message_id, "x")).toThrow(
      code("ERR_NO_SUCH_BUTTON"),
    );
    expect(() => sim.pressButton(user, chat, 999, "x")).toThrow(code("ERR_UNKNOWN_MESSAGE"));
  });
});

describe("waiting for the bot", () => {
  it("waitForMessage resolves with the bot's next matching message", async () => {
    await setup();
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const waiting = sim.waitForMessage(
      chat,
      (message) => "text" in message && message.text === "second",
    );
    await call(sim, "sendMessage", { chat_id: chat.id, text: "first" });
    await call(sim, "sendMessage", { chat_id: chat.id, text: "second" });
    expect(await waiting).toMatchObject({ text: "second", message_id: 2 });
  });

  it("afterMessageId also finds a reply that came before the wait", async () => {
    await setup();
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const question = sim.sendText(user, chat, "ping");
    await call(sim, "sendMessage", { chat_id: chat.id, text: "pong" });
    expect(
      await sim.waitForMessage(chat, undefined, { afterMessageId: question.message_id }),
    ).toMatchObject({
      text: "pong",
    });
  });

  it("times out on the simulator clock, aborts with the signal and ends on close", async () => {
    const clock = new ManualClock();
    await setup({ clock });
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const timeout = expect(
      sim.waitForMessage(chat, undefined, { timeoutMs: 1000 }),
    ).rejects.toThrow(code("ERR_WAIT_TIMEOUT"));
    await clock.advance(1000);
    await timeout;
    const controller = new AbortController();
    const aborted = sim.waitForMessage(chat, undefined, { signal: controller.signal });
    controller.abort(new Error("stop"));
    await expect(aborted).rejects.toThrow("stop");
    const pending = expect(sim.waitForMessage(chat)).rejects.toThrow(code("ERR_SIM_CLOSED"));
    await sim.close();
    await pending;
    expect(clock.pendingTimers).toBe(0);
  });
});

describe("transcript, counters, snapshot", () => {
  it("keeps a bounded transcript and counts what it drops", async () => {
    await setup({ maxTranscriptEvents: 3, maxMessagesPerChat: 4 });
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    for (let i = 0; i < 5; i++) sim.sendText(user, chat, `m${i}`);
    const transcript = sim.transcript(chat);
    expect(transcript.events.map((event) => event.text)).toEqual(["m2", "m3", "m4"]);
    expect(transcript.droppedEvents).toBe(2);
    expect(transcript.messages.map((m) => ("text" in m ? m.text : ""))).toEqual([
      "m1",
      "m2",
      "m3",
      "m4",
    ]);
    expect(transcript.forgottenMessages).toBe(1);
    expect(sim.counters().transcriptEventsDropped).toBe(2);
    const seqs = transcript.events.map((event) => event.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it("counts calls per method and responses per status", async () => {
    await setup();
    await call(sim, "getMe");
    await call(sim, "getme");
    await call(sim, "nope");
    await call(sim, "sendMessage", { chat_id: 1, text: "x" });
    const counters = sim.counters();
    expect(counters.calls).toEqual({ getMe: 2, "<unknown>": 1, sendMessage: 1 });
    expect(counters.responses).toEqual({ "200": 2, "404": 1, "400": 1 });
    expect(counters.requests).toBe(4);
    expect(Object.isFrozen(counters)).toBe(true);
  });

  it("snapshots live state without any token", async () => {
    await setup({ bots: [{}, {}] });
    const user = sim.users.create();
    sim.chats.createPrivate(user);
    const snapshot = sim.snapshot();
    expect(snapshot).toMatchObject({
      users: 1,
      chats: 1,
      timeScale: 1,
      rangeRequests: true,
      isClosed: false,
    });
    expect(snapshot.bots).toHaveLength(2);
    const text = JSON.stringify(snapshot);
    for (const token of sim.tokens) expect(text).not.toContain(token.split(":")[1]);
  });
});

describe("several bots", () => {
  it("gives each bot its own token, private chats and updates", async () => {
    await setup({ bots: [{ username: "first_bot" }, { username: "second_bot" }] });
    const user = sim.users.create();
    const withFirst = sim.chats.createPrivate(user, { bot: "first_bot" });
    const withSecond = sim.chats.createPrivate(user, { bot: "second_bot" });
    expect(withFirst.id).toBe(withSecond.id);
    sim.sendText(user, withSecond, "to the second");
    expect(await drain(sim.tokens[0])).toEqual([]);
    expect((await drain(sim.tokens[1]))[0]?.message?.text).toBe("to the second");
    expect(() => sim.transcript(user.id)).toThrow(code("ERR_AMBIGUOUS_CHAT"));
    expect(sim.transcript(user.id, { bot: "second_bot" }).messages).toHaveLength(1);
    expect(
      (await call(sim, "getMe", {}, { token: sim.tokens[1] as string })).body.result.username,
    ).toBe("second_bot");
  });
});

// What the chat page reads: the chat list newest first with each chat's newest message, one chat
// with its members, bots and draft, the users, the panel — and the public reads behind it:
// sendBudget (on a manual clock), the reply keyboard each user sees, and the faults armed.

import { ManualClock } from "@telepace/core";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, start } from "../src/index.js";
import { call, control } from "./helpers.js";

let sim: BotApiSim;

afterEach(() => sim?.close());

async function result(path: string, body?: Record<string, unknown>) {
  const reply = await control(sim, path, body);
  expect(reply.body, path).toMatchObject({ ok: true });
  return reply.body.result;
}

describe("the chat list", () => {
  it("lists chats by newest activity with their newest kept message", async () => {
    sim = await start({ rateLimits: false });
    const [ann, ben] = [
      sim.users.create({ firstName: "Ann" }),
      sim.users.create({ firstName: "Ben" }),
    ];
    const annChat = sim.chats.createPrivate(ann);
    const benChat = sim.chats.createPrivate(ben);
    const group = sim.chats.createGroup({ title: "Both", members: [ann, ben] });
    const quiet = sim.users.create({ firstName: "Quiet" });
    sim.chats.createPrivate(quiet);
    sim.sendText(ann, annChat, "first");
    const news = await call(sim, "sendMessage", { chat_id: benChat.id, text: "news" });
    sim.sendText(ann, group, "in the group");
    const gone = await call(sim, "sendMessage", { chat_id: group.id, text: "to delete" });
    await call(sim, "deleteMessage", {
      chat_id: group.id,
      message_id: gone.body.result.message_id,
    });
    const list = await result("/page/chats");
    expect(list.total).toBe(4);
    expect(list.chats.map((entry: { chat: { id: number } }) => entry.chat.id)).toEqual([
      group.id,
      benChat.id,
      annChat.id,
      quiet.id,
    ]);
    // The deleted message is not the newest one; the one before it is.
    expect(list.chats[0].newest.text).toBe("in the group");
    expect(list.chats[1].newest).toEqual(news.body.result);
    expect(list.chats[3]).toMatchObject({ newest: null });
    // A chat created now comes first, until others are active again.
    const fresh = sim.chats.createPrivate(sim.users.create({ firstName: "Fresh" }));
    expect((await result("/page/chats")).chats[0].chat.id).toBe(fresh.id);
    expect((await result("/page/chats?limit=1")).chats).toHaveLength(1);
    const bad = await control(sim, "/page/chats?limit=0");
    expect(bad.body.description).toBe(
      "RangeError: Expected `limit` to be an integer from 1 to 1000, got 0",
    );
  });

  it("shows one chat with its latest messages, members, bots with their commands, and draft", async () => {
    sim = await start({ rateLimits: false });
    const ann = sim.users.create({ firstName: "Ann" });
    const ben = sim.users.create({ firstName: "Ben" });
    await call(sim, "setMyCommands", { commands: [{ command: "go", description: "Go!" }] });
    const group = sim.chats.createGroup({ title: "G", members: [ann, ben] });
    for (let i = 0; i < 5; i++) sim.sendText(ann, group, `m${i}`);
    const view = await result(`/page/chat?chat_id=${group.id}&limit=3`);
    expect(view.messages.map((m: { text?: string }) => m.text)).toEqual(["m2", "m3", "m4"]);
    expect(view.earlierMessages).toBe(3);
    expect(view.members).toEqual([
      { user: ann, status: "creator" },
      { user: ben, status: "member" },
    ]);
    expect(view.bots).toEqual([
      {
        id: sim.bot.id,
        username: sim.bot.username,
        firstName: sim.bot.first_name,
        status: "member",
        commands: [{ command: "go", description: "Go!" }],
      },
    ]);
    const chat = sim.chats.createPrivate(ann);
    await call(sim, "sendMessageDraft", { chat_id: chat.id, draft_id: 9, text: "…" });
    const privateView = await result(`/page/chat?chat_id=${chat.id}`);
    expect(privateView.draft).toMatchObject({ draftId: 9, text: "…" });
    expect(privateView.bots[0]).toMatchObject({ id: sim.bot.id, status: "member" });
    const users = await result("/page/users");
    expect(users).toEqual({ users: [ben, ann], total: 2 });
  });

  it("shows the panel: the bot's state, its budget in this chat, 429s and the faults armed", async () => {
    sim = await start();
    const ann = sim.users.create();
    const chat = sim.chats.createPrivate(ann);
    for (let i = 0; i < 4; i++) await call(sim, "sendMessage", { chat_id: chat.id, text: `${i}` });
    sim.faults.failNext("sendMessage", 2, { code: 502 });
    sim.faults.setLatency(3000, { methods: ["sendMessage"] });
    const panel = await result(`/page/panel?chat_id=${chat.id}`);
    expect(panel).toMatchObject({
      bot: { id: sim.bot.id, username: sim.bot.username, pendingUpdates: 0, isPolling: false },
      tooManyRequests: { chat: 1, total: 1 },
      timeScale: 1,
      faultsInjected: 0,
      faults: {
        queued: [{ method: "sendmessage", kind: "fail", code: 502, remaining: 2 }],
        latency: { ms: 3000, jitterMs: 0, methods: ["sendmessage"] },
      },
    });
    expect(panel.budget.chat.available).toBeLessThan(1);
    expect(panel.budget.group).toBeUndefined();
    expect(panel.budget.drafts).toMatchObject({ available: 5, capacity: 5 });
  });
});

describe("sendBudget", () => {
  it("tells what is left of each limit and refills it as the clock runs", async () => {
    const clock = new ManualClock();
    sim = await start({ clock, timeScale: 2 });
    const ann = sim.users.create();
    const group = sim.chats.createGroup({ members: [ann] });
    const chat = sim.chats.createPrivate(ann);
    expect(sim.sendBudget(chat)).toEqual({
      chat: { available: 3, capacity: 3, perSecond: 2 },
      group: undefined,
      global: { available: 30, capacity: 30, perSecond: 60 },
      drafts: { available: 5, capacity: 5, perSecond: 10 },
    });
    for (let i = 0; i < 3; i++) await call(sim, "sendMessage", { chat_id: group.id, text: `${i}` });
    expect(sim.sendBudget(group)).toMatchObject({
      chat: { available: 0, capacity: 3 },
      group: { used: 3, limit: 20, windowMs: 30_000, sentAgoMs: [0, 0, 0] },
      global: { available: 27, capacity: 30 },
      drafts: undefined,
    });
    // 250 real ms are 500 of Telegram's at time scale 2: half a message for the chat.
    await clock.advance(250);
    expect(sim.sendBudget(group)).toMatchObject({
      chat: { available: 0.5 },
      group: { used: 3, sentAgoMs: [250, 250, 250] },
      global: { available: 30 },
    });
    await clock.advance(30_000);
    expect(sim.sendBudget(group)).toMatchObject({
      chat: { available: 3 },
      group: { used: 0, sentAgoMs: [] },
    });
    sim.setRateLimits(false);
    expect(sim.sendBudget(group)).toBe(false);
    expect(await result(`/budget?chat_id=${group.id}`)).toBe(false);
    expect(() => sim.sendBudget(chat, { bots: 1 } as never)).toThrow("Unknown option `bots`");
  });
});

describe("reply keyboards", () => {
  const keyboard = { keyboard: [["Yes", "No"]], one_time_keyboard: true };

  it("shows a bot's keyboard to the chat until it is removed, and carries it on the event", async () => {
    sim = await start({ rateLimits: false });
    const ann = sim.users.create();
    const chat = sim.chats.createPrivate(ann);
    const sent = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "Sure?",
      reply_markup: keyboard,
    });
    // A Message carries no reply keyboard; the simulator keeps it for the chat.
    expect(sent.body.result.reply_markup).toBeUndefined();
    expect(sim.replyKeyboard(ann, chat)).toEqual({
      markup: keyboard,
      messageId: sent.body.result.message_id,
      botId: sim.bot.id,
    });
    const event = sim.transcript(chat).events.at(-1);
    expect(event).toMatchObject({ kind: "send", replyMarkup: keyboard });
    expect(await result(`/keyboard?chat_id=${chat.id}&user_id=${ann.id}`)).toMatchObject({
      markup: keyboard,
    });
    await call(sim, "sendMessage", { chat_id: chat.id, text: "plain" });
    expect(sim.replyKeyboard(ann, chat)).toBeDefined();
    await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "gone",
      reply_markup: { remove_keyboard: true },
    });
    expect(sim.replyKeyboard(ann, chat)).toBeUndefined();
    expect(await result(`/keyboard?chat_id=${chat.id}&user_id=${ann.id}`)).toBeNull();
    await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "answer me",
      reply_markup: { force_reply: true },
    });
    expect(sim.transcript(chat).events.at(-1)?.replyMarkup).toEqual({ force_reply: true });
  });

  it("shows a selective keyboard only to the users mentioned and the sender replied to", async () => {
    sim = await start({ rateLimits: false });
    const ann = sim.users.create({ username: "ann_user" });
    const ben = sim.users.create();
    const cid = sim.users.create();
    const group = sim.chats.createGroup({ members: [ann, ben, cid] });
    const everyone = await call(sim, "sendMessage", {
      chat_id: group.id,
      text: "all of you",
      reply_markup: { keyboard: [["All"]] },
    });
    const fromBen = sim.sendText(ben, group, "/start");
    await call(sim, "sendMessage", {
      chat_id: group.id,
      text: "@ann_user and you",
      reply_parameters: { message_id: fromBen.message_id },
      reply_markup: { keyboard: [["Just us"]], selective: true },
    });
    const seen = (user: typeof ann) => sim.replyKeyboard(user, group)?.markup.keyboard[0]?.[0];
    expect([seen(ann), seen(ben), seen(cid)]).toEqual(["Just us", "Just us", "All"]);
    expect(sim.replyKeyboard(cid, group)?.messageId).toBe(everyone.body.result.message_id);
    await call(sim, "sendMessage", {
      chat_id: group.id,
      text: "@ann_user not any more",
      reply_markup: { remove_keyboard: true, selective: true },
    });
    expect([seen(ann), seen(ben), seen(cid)]).toEqual([undefined, "Just us", "All"]);
    await call(sim, "sendMessage", {
      chat_id: group.id,
      text: "reset",
      reply_markup: { remove_keyboard: true },
    });
    expect([seen(ann), seen(ben), seen(cid)]).toEqual([undefined, undefined, undefined]);
  });
});

describe("faults.armed", () => {
  it("lists queued faults in firing order, the latency and the error rate, and is frozen", async () => {
    sim = await start();
    expect(sim.faults.armed()).toEqual({ queued: [], latency: undefined, errorRate: undefined });
    sim.faults.failNext("sendMessage", 2, { code: 502 });
    sim.faults.resetNext("sendMessage", 1, { afterProcessing: true });
    sim.faults.malformNext("*");
    sim.faults.setErrorRate(0.25, { code: 503 });
    const armed = sim.faults.armed();
    expect(armed).toEqual({
      queued: [
        { method: "sendmessage", kind: "fail", remaining: 2, code: 502, afterProcessing: false },
        {
          method: "sendmessage",
          kind: "reset",
          remaining: 1,
          code: undefined,
          afterProcessing: true,
        },
        { method: "*", kind: "malformed", remaining: 1, code: undefined, afterProcessing: false },
      ],
      latency: undefined,
      errorRate: { rate: 0.25, code: 503, methods: undefined },
    });
    expect(Object.isFrozen(armed) && Object.isFrozen(armed.queued[0])).toBe(true);
    await call(sim, "sendMessage", { chat_id: 1, text: "x" });
    expect(sim.faults.armed().queued[0]?.remaining).toBe(1);
    expect(await result("/faults")).toMatchObject({ queued: [{ remaining: 1 }, {}, {}] });
  });
});

// Every method class against the sim: what goes through the outbox, with which key and priority,
// and what passes straight through unpaced.

import { afterEach, describe, expect, it } from "vitest";
import { classOfMethod, methodClasses } from "../src/method-classes.js";
import { planOperation } from "../src/operation-plan.js";
import { type Fixture, fixture } from "./support.js";

let f: Fixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe("method classes", () => {
  it("classifies every method, and a future one by its name", () => {
    expect(Object.keys(methodClasses).length).toBeGreaterThan(180);
    expect(classOfMethod("getSomethingNew")).toBe("read");
    expect(classOfMethod("doSomethingNew")).toBe("other");
    expect(methodClasses.getUpdates).toBe("read");
    expect(methodClasses.editMessageMedia).toBe("edit");
  });

  it("plans keys, priorities and supersedes per class", () => {
    expect(planOperation("getChat", { chat_id: 1 })).toBeUndefined();
    expect(planOperation("sendMessage", { chat_id: 1, text: "x" })).toMatchObject({
      chatId: 1,
      key: undefined,
      priority: 0,
      idempotent: false,
      paced: true,
    });
    expect(planOperation("editMessageCaption", { chat_id: 1, message_id: 5 })).toMatchObject({
      chatId: 1,
      key: "editMessageCaption:5",
      priority: 2,
      idempotent: true,
    });
    expect(planOperation("editMessageText", { inline_message_id: "abc" })).toMatchObject({
      chatId: undefined,
      key: "editMessageText:inline:abc",
    });
    const remove = planOperation("deleteMessages", { chat_id: -5, message_ids: [7, 8] });
    expect(remove).toMatchObject({ chatId: -5, priority: 1, idempotent: true });
    expect(remove?.supersedes).toContain("editMessageReplyMarkup:8");
    expect(planOperation("sendChatAction", { chat_id: 1, action: "typing" })).toMatchObject({
      key: "chat-action::",
      paced: false,
    });
    expect(planOperation("answerCallbackQuery", { callback_query_id: "q" })).toMatchObject({
      chatId: undefined,
      key: "callback:q",
    });
    expect(planOperation("sendMessageDraft", { chat_id: 1, draft_id: 3 })).toMatchObject({
      key: "sendMessageDraft:3",
      priority: 2,
    });
    expect(planOperation("setMyCommands", { commands: [] })).toMatchObject({
      methodClass: "other",
      chatId: undefined,
    });
    expect(planOperation("pinChatMessage", { chat_id: 3, message_id: 1 })).toMatchObject({
      chatId: 3,
      paced: false,
    });
  });

  it("sends, edits, deletes, chat actions, callback answers and chat-less calls go through the outbox; reads do not", async () => {
    f = await fixture();
    const { sim, bot, pace } = f;
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);

    const me = await bot.api.getMe();
    expect(me.id).toBe(sim.bot.id);
    await bot.api.getChat(chat.id);
    await bot.api.getUpdates({ timeout: 0 });
    expect(pace.snapshot().counters.enqueued).toBe(0);

    const sent = await bot.api.sendMessage(chat.id, "hello", {
      reply_markup: { inline_keyboard: [[{ text: "Tap", callback_data: "tap" }]] },
    });
    expect(sent.text).toBe("hello");
    const edited = await bot.api.editMessageText(chat.id, sent.message_id, "hello, edited", {
      reply_markup: { inline_keyboard: [[{ text: "Tap", callback_data: "tap" }]] },
    });
    expect(edited).toMatchObject({ text: "hello, edited" });
    await bot.api.editMessageReplyMarkup(chat.id, sent.message_id, {
      reply_markup: { inline_keyboard: [[{ text: "Again", callback_data: "tap" }]] },
    });
    expect(await bot.api.sendChatAction(chat.id, "typing")).toBe(true);
    const press = sim.pressButton(user, chat, sent.message_id, "tap");
    expect(await bot.api.answerCallbackQuery(press.id, { text: "ok" })).toBe(true);
    expect(await bot.api.setMyCommands([{ command: "start", description: "Start" }])).toBe(true);
    const doc = sim.sendDocument(user, chat, { bytes: Buffer.from("abc"), fileName: "a.txt" });
    const file = await bot.api.getFile(doc.document?.file_id ?? "");
    expect(file.file_path).toBeTruthy();
    expect(await bot.api.deleteMessage(chat.id, sent.message_id)).toBe(true);

    const counters = pace.snapshot().counters;
    expect(counters.enqueued).toBe(7);
    expect(counters.delivered).toBe(7);
    expect(sim.callbackAnswer(press.id)).toMatchObject({ text: "ok" });
    expect(sim.counters().calls).toMatchObject({ getMe: 1, getChat: 1, getFile: 1 });
  });
});

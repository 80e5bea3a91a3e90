// Every method class against the sim: what goes through the outbox and what passes straight
// through unpaced (the outbox's tests check each class's key and priority).

import { afterEach, describe, expect, it } from "vitest";
import { type Fixture, fixture } from "./support.js";

let f: Fixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe("method classes", () => {
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

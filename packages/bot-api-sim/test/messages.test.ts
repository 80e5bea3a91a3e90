// Messages with real state: sendMessage (limits, entities, markup, replies), the edit methods
// (not modified, not found, not own), deleteMessage(s) and sendChatAction.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BotApiSim, start } from "../src/index.js";
import { call } from "./helpers.js";

let sim: BotApiSim;

beforeAll(async () => {
  sim = await start({ rateLimits: false });
});
afterAll(() => sim.close());

function privateChat() {
  const user = sim.users.create();
  return { user, chat: sim.chats.createPrivate(user) };
}

const NOT_MODIFIED =
  "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";

describe("sendMessage", () => {
  it("returns the Message with ids, sender, chat and date", async () => {
    const { user, chat } = privateChat();
    const first = (await call(sim, "sendMessage", { chat_id: chat.id, text: "one" })).body.result;
    const second = (await call(sim, "sendMessage", { chat_id: chat.id, text: "two" })).body.result;
    expect(first).toMatchObject({
      message_id: 1,
      from: {
        id: sim.bot.id,
        is_bot: true,
        first_name: sim.bot.first_name,
        username: sim.bot.username,
      },
      chat: { id: user.id, type: "private", first_name: user.first_name },
      text: "one",
    });
    expect(second.message_id).toBe(2);
    expect(Math.abs(first.date - Date.now() / 1000)).toBeLessThan(60);
  });

  it("accepts 4096 characters and refuses 4097 (counted as characters, not UTF-16 units)", async () => {
    const { chat } = privateChat();
    const ok = await call(sim, "sendMessage", { chat_id: chat.id, text: "😀".repeat(4096) });
    expect(ok.body.ok).toBe(true);
    const tooLong = await call(sim, "sendMessage", { chat_id: chat.id, text: "a".repeat(4097) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.description).toBe("Bad Request: message is too long");
  });

  it("counts the limit after entity parsing", async () => {
    const { chat } = privateChat();
    const text = `<b>${"a".repeat(4096)}</b>`;
    const reply = await call(sim, "sendMessage", { chat_id: chat.id, text, parse_mode: "HTML" });
    expect(reply.body.ok).toBe(true);
    expect(reply.body.result.entities).toEqual([{ type: "bold", offset: 0, length: 4096 }]);
  });

  it("trims surrounding whitespace and detects commands, mentions, hashtags and links", async () => {
    const { chat } = privateChat();
    const reply = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "  /help @someone #tag https://example.org/x.  ",
    });
    expect(reply.body.result.text).toBe("/help @someone #tag https://example.org/x.");
    expect(reply.body.result.entities).toEqual([
      { type: "bot_command", offset: 0, length: 5 },
      { type: "mention", offset: 6, length: 8 },
      { type: "hashtag", offset: 15, length: 4 },
      { type: "url", offset: 20, length: 21 },
    ]);
  });

  it("detects each kind of entity alone in a text, and none in a text without one", async () => {
    const { chat } = privateChat();
    const entitiesOf = async (text: string) =>
      (await call(sim, "sendMessage", { chat_id: chat.id, text })).body.result.entities;
    await expect(entitiesOf("mail ann@example.org")).resolves.toEqual([
      { type: "email", offset: 5, length: 15 },
    ]);
    await expect(entitiesOf("pay in $USD")).resolves.toEqual([
      { type: "cashtag", offset: 7, length: 4 },
    ]);
    await expect(entitiesOf("see WWW.EXAMPLE.ORG")).resolves.toEqual([
      { type: "url", offset: 4, length: 15 },
    ]);
    await expect(entitiesOf("#tag")).resolves.toEqual([{ type: "hashtag", offset: 0, length: 4 }]);
    await expect(entitiesOf("12345 plain words, no marks")).resolves.toBeUndefined();
  });

  it("keeps explicit entities and drops detectable ones it recomputes", async () => {
    const { chat } = privateChat();
    const reply = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "bold words",
      entities: [
        { type: "bold", offset: 0, length: 4 },
        { type: "mention", offset: 5, length: 5 },
      ],
    });
    expect(reply.body.result.entities).toEqual([{ type: "bold", offset: 0, length: 4 }]);
  });

  it("reports parse errors as can't parse entities", async () => {
    const { chat } = privateChat();
    const reply = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "<b>open",
      parse_mode: "HTML",
    });
    expect(reply.body.description).toBe(
      "Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"b\"",
    );
  });

  it("keeps inline keyboards on the message and only records reply keyboards", async () => {
    const { chat } = privateChat();
    const inline = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "inline",
      reply_markup: { inline_keyboard: [[{ text: "Go", url: "https://example.org" }]] },
    });
    expect(inline.body.result.reply_markup).toEqual({
      inline_keyboard: [[{ text: "Go", url: "https://example.org" }]],
    });
    const keyboard = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "keyboard",
      reply_markup: { keyboard: [["A", { text: "B" }]], resize_keyboard: true },
    });
    expect(keyboard.body.result.reply_markup).toBeUndefined();
  });

  it("replies with reply_parameters and the legacy reply_to_message_id", async () => {
    const { user, chat } = privateChat();
    const question = sim.sendText(user, chat, "question?");
    const viaParams = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "answer",
      reply_parameters: { message_id: question.message_id },
    });
    expect(viaParams.body.result.reply_to_message).toMatchObject({
      message_id: question.message_id,
      text: "question?",
    });
    const legacy = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "answer 2",
      reply_to_message_id: viaParams.body.result.message_id,
    });
    expect(legacy.body.result.reply_to_message.message_id).toBe(viaParams.body.result.message_id);
    expect(legacy.body.result.reply_to_message.reply_to_message).toBeUndefined();
  });

  it("fails a reply to a missing message unless allowed to send without it", async () => {
    const { chat } = privateChat();
    const missing = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "x",
      reply_parameters: { message_id: 99 },
    });
    expect(missing.body.description).toBe("Bad Request: message to be replied not found");
    const allowed = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "x",
      reply_parameters: { message_id: 99, allow_sending_without_reply: true },
    });
    expect(allowed.body.ok).toBe(true);
    expect(allowed.body.result.reply_to_message).toBeUndefined();
  });

  it("records sends in the transcript with the method and time", async () => {
    const { chat } = privateChat();
    await call(sim, "sendMessage", { chat_id: chat.id, text: "logged" });
    const transcript = sim.transcript(chat);
    expect(transcript.messages.map((m) => ("text" in m ? m.text : undefined))).toEqual(["logged"]);
    expect(transcript.events).toHaveLength(1);
    expect(transcript.events[0]).toMatchObject({
      kind: "send",
      actor: "bot",
      actorId: sim.bot.id,
      method: "sendMessage",
      messageId: 1,
      text: "logged",
      chatId: chat.id,
    });
  });
});

describe("editMessageText", () => {
  it("edits text, sets edit_date and records the edit", async () => {
    const { chat } = privateChat();
    const sent = (await call(sim, "sendMessage", { chat_id: chat.id, text: "v1" })).body.result;
    const edited = await call(sim, "editMessageText", {
      chat_id: chat.id,
      message_id: sent.message_id,
      text: "v2",
    });
    expect(edited.body.result).toMatchObject({ message_id: sent.message_id, text: "v2" });
    expect(typeof edited.body.result.edit_date).toBe("number");
    const transcript = sim.transcript(chat);
    expect(transcript.events.map((e) => [e.kind, e.text])).toEqual([
      ["send", "v1"],
      ["edit", "v2"],
    ]);
    expect(transcript.messages).toHaveLength(1);
    expect(transcript.messages[0]).toMatchObject({ text: "v2" });
  });

  it("refuses an edit that changes nothing", async () => {
    const { chat } = privateChat();
    const markup = { inline_keyboard: [[{ text: "k", callback_data: "k" }]] };
    const sent = (
      await call(sim, "sendMessage", { chat_id: chat.id, text: "same", reply_markup: markup })
    ).body.result;
    const same = await call(sim, "editMessageText", {
      chat_id: chat.id,
      message_id: sent.message_id,
      text: "same",
      reply_markup: markup,
    });
    expect(same.status).toBe(400);
    expect(same.body.description).toBe(NOT_MODIFIED);
    const newMarkup = await call(sim, "editMessageText", {
      chat_id: chat.id,
      message_id: sent.message_id,
      text: "same",
    });
    expect(newMarkup.body.ok).toBe(true);
    expect(newMarkup.body.result.reply_markup).toBeUndefined();
  });

  it("counts different entities as a change", async () => {
    const { chat } = privateChat();
    const sent = (await call(sim, "sendMessage", { chat_id: chat.id, text: "word" })).body.result;
    const bold = await call(sim, "editMessageText", {
      chat_id: chat.id,
      message_id: sent.message_id,
      text: "<b>word</b>",
      parse_mode: "HTML",
    });
    expect(bold.body.ok).toBe(true);
  });

  it("answers message to edit not found for a missing or deleted message", async () => {
    const { chat } = privateChat();
    const missing = await call(sim, "editMessageText", {
      chat_id: chat.id,
      message_id: 77,
      text: "x",
    });
    expect(missing.body.description).toBe("Bad Request: message to edit not found");
    const sent = (await call(sim, "sendMessage", { chat_id: chat.id, text: "soon gone" })).body
      .result;
    await call(sim, "deleteMessage", { chat_id: chat.id, message_id: sent.message_id });
    const deleted = await call(sim, "editMessageText", {
      chat_id: chat.id,
      message_id: sent.message_id,
      text: "x",
    });
    expect(deleted.body.description).toBe("Bad Request: message to edit not found");
  });

  it("refuses to edit a user's message", async () => {
    const { user, chat } = privateChat();
    const theirs = sim.sendText(user, chat, "mine");
    const reply = await call(sim, "editMessageText", {
      chat_id: chat.id,
      message_id: theirs.message_id,
      text: "x",
    });
    expect(reply.body.description).toBe("Bad Request: message can't be edited");
  });

  it("needs a message identifier", async () => {
    const reply = await call(sim, "editMessageText", { text: "x" });
    expect(reply.body.description).toBe("Bad Request: message identifier is not specified");
  });

  it("editMessageReplyMarkup replaces only the keyboard, and refuses a no-op", async () => {
    const { chat } = privateChat();
    const sent = (await call(sim, "sendMessage", { chat_id: chat.id, text: "keys" })).body.result;
    const markup = { inline_keyboard: [[{ text: "A", callback_data: "a" }]] };
    const added = await call(sim, "editMessageReplyMarkup", {
      chat_id: chat.id,
      message_id: sent.message_id,
      reply_markup: markup,
    });
    expect(added.body.result).toMatchObject({ text: "keys", reply_markup: markup });
    const again = await call(sim, "editMessageReplyMarkup", {
      chat_id: chat.id,
      message_id: sent.message_id,
      reply_markup: markup,
    });
    expect(again.body.description).toBe(NOT_MODIFIED);
  });
});

describe("deleteMessage and deleteMessages", () => {
  it("deletes once; the second time the message is not found", async () => {
    const { chat } = privateChat();
    const sent = (await call(sim, "sendMessage", { chat_id: chat.id, text: "bye" })).body.result;
    expect(
      (await call(sim, "deleteMessage", { chat_id: chat.id, message_id: sent.message_id })).body,
    ).toEqual({
      ok: true,
      result: true,
    });
    const again = await call(sim, "deleteMessage", {
      chat_id: chat.id,
      message_id: sent.message_id,
    });
    expect(again.body.description).toBe("Bad Request: message to delete not found");
    const transcript = sim.transcript(chat);
    expect(transcript.messages).toEqual([]);
    expect(transcript.events.map((e) => e.kind)).toEqual(["send", "delete"]);
  });

  it("names missing identifiers", async () => {
    const { chat } = privateChat();
    expect((await call(sim, "deleteMessage", { message_id: 1 })).body.description).toBe(
      "Bad Request: chat identifier is not specified",
    );
    expect((await call(sim, "deleteMessage", { chat_id: chat.id })).body.description).toBe(
      "Bad Request: message identifier is not specified",
    );
  });

  it("lets a bot delete incoming messages in private chats but not others' messages in groups", async () => {
    const { user, chat } = privateChat();
    const incoming = sim.sendText(user, chat, "delete me");
    expect(
      (await call(sim, "deleteMessage", { chat_id: chat.id, message_id: incoming.message_id })).body
        .ok,
    ).toBe(true);
    const group = sim.chats.createGroup({ members: [user] });
    const theirs = sim.sendText(user, group, "/cmd");
    const refused = await call(sim, "deleteMessage", {
      chat_id: group.id,
      message_id: theirs.message_id,
    });
    expect(refused.body.description).toBe("Bad Request: message can't be deleted");
  });

  it("deleteMessages deletes what it can and skips the rest", async () => {
    const { chat } = privateChat();
    const a = (await call(sim, "sendMessage", { chat_id: chat.id, text: "a" })).body.result;
    const b = (await call(sim, "sendMessage", { chat_id: chat.id, text: "b" })).body.result;
    const reply = await call(sim, "deleteMessages", {
      chat_id: chat.id,
      message_ids: [a.message_id, b.message_id, 999],
    });
    expect(reply.body).toEqual({ ok: true, result: true });
    expect(sim.transcript(chat).messages).toEqual([]);
    const none = await call(sim, "deleteMessages", { chat_id: chat.id, message_ids: [999] });
    expect(none.body.description).toBe("Bad Request: message to delete not found");
  });
});

describe("sendChatAction", () => {
  it("accepts Telegram's actions and records them", async () => {
    const { chat } = privateChat();
    expect(
      (await call(sim, "sendChatAction", { chat_id: chat.id, action: "typing" })).body,
    ).toEqual({ ok: true, result: true });
    expect(sim.transcript(chat).events[0]).toMatchObject({ kind: "chat_action", action: "typing" });
  });

  it("refuses an unknown action", async () => {
    const { chat } = privateChat();
    const reply = await call(sim, "sendChatAction", { chat_id: chat.id, action: "dancing" });
    expect(reply.body.description).toBe("Bad Request: wrong parameter action in request");
  });
});

describe("getChat", () => {
  it("describes private chats, groups and supergroups", async () => {
    const { user, chat } = privateChat();
    expect((await call(sim, "getChat", { chat_id: chat.id })).body.result).toMatchObject({
      id: user.id,
      type: "private",
      first_name: user.first_name,
      accent_color_id: 0,
    });
    const group = sim.chats.createGroup({ title: "Team", members: [user] });
    expect((await call(sim, "getChat", { chat_id: group.id })).body.result).toMatchObject({
      id: group.id,
      type: "group",
      title: "Team",
    });
    const supergroup = sim.chats.createSupergroup({ title: "Big", members: [user] });
    expect(supergroup.id).toBeLessThan(-1_000_000_000_000);
    expect((await call(sim, "getChat", { chat_id: supergroup.id })).body.result).toMatchObject({
      type: "supergroup",
    });
  });
});

describe("commands", () => {
  it("setMyCommands then getMyCommands round-trips; deleteMyCommands clears", async () => {
    const commands = [{ command: "start", description: "Start" }];
    expect((await call(sim, "setMyCommands", { commands })).body.result).toBe(true);
    expect((await call(sim, "getMyCommands")).body.result).toEqual(commands);
    await call(sim, "deleteMyCommands");
    expect((await call(sim, "getMyCommands")).body.result).toEqual([]);
  });
});

// The write vocabulary: every method's class, the plan of each class (chat, key, priority,
// idempotence, pacing, what it supersedes), the one key scheme, and the replace-progress pair.

import { describe, expect, it } from "vitest";
import {
  classOfMethod,
  isConnectFailure,
  methodClasses,
  networkErrorCode,
  type OutboxDelivered,
  Priority,
  planWrite,
  replacingProgress,
  TelegramOutbox,
  writeKeys,
  writeOperation,
} from "../src/index.js";

describe("method classes", () => {
  it("classifies every method, and a future one by its name", () => {
    expect(Object.keys(methodClasses).length).toBeGreaterThan(180);
    expect(classOfMethod("getSomethingNew")).toBe("read");
    expect(classOfMethod("doSomethingNew")).toBe("other");
    expect(methodClasses.getUpdates).toBe("read");
    expect(methodClasses.editMessageMedia).toBe("edit");
  });
});

describe("planWrite", () => {
  it("plans keys, priorities and supersedes per class", () => {
    expect(planWrite("getChat", { chat_id: 1 })).toBeUndefined();
    expect(planWrite("sendMessage", { chat_id: 1, text: "x" })).toEqual({
      methodClass: "send",
      chatId: 1,
      key: undefined,
      priority: Priority.send,
      idempotent: false,
      paced: true,
      supersedes: undefined,
    });
    expect(planWrite("editMessageText", { chat_id: 1, message_id: 5 })).toMatchObject({
      chatId: 1,
      key: "edit:5",
      priority: Priority.edit,
      idempotent: true,
      paced: true,
    });
    expect(planWrite("editMessageCaption", { chat_id: 1, message_id: 5 })).toMatchObject({
      key: "edit:5:editMessageCaption",
      priority: Priority.edit,
    });
    expect(planWrite("editMessageText", { inline_message_id: "abc" })).toMatchObject({
      chatId: undefined,
      key: "edit:inline:abc",
    });
    expect(planWrite("stopMessageLiveLocation", { chat_id: 1, message_id: 5 })).toMatchObject({
      supersedes: ["edit:5:editMessageLiveLocation"],
    });
    const remove = planWrite("deleteMessages", { chat_id: -5, message_ids: [7, 8] });
    expect(remove).toMatchObject({ chatId: -5, key: undefined, priority: Priority.delete });
    expect(remove.supersedes).toEqual([...writeKeys.editsOf(7), ...writeKeys.editsOf(8)]);
    expect(planWrite("deleteMessage", { chat_id: 1, message_id: 7 })).toMatchObject({
      key: "delete:7",
      idempotent: true,
      supersedes: writeKeys.editsOf(7),
    });
    expect(
      planWrite("deleteEphemeralMessage", {
        chat_id: 1,
        receiver_user_id: 2,
        ephemeral_message_id: 3,
      }),
    ).toMatchObject({
      key: "delete:ephemeral:2/3",
      supersedes: expect.arrayContaining(["edit:ephemeral:2/3:editEphemeralMessageText"]),
    });
    expect(planWrite("sendChatAction", { chat_id: 1, action: "typing" })).toMatchObject({
      key: "chat-action",
      idempotent: true,
      paced: false,
    });
    expect(
      planWrite("sendChatAction", { chat_id: -1, action: "typing", message_thread_id: 4 }),
    ).toMatchObject({ key: "chat-action:thread:4" });
    expect(planWrite("answerCallbackQuery", { callback_query_id: "q" })).toMatchObject({
      chatId: undefined,
      key: "callback:q",
    });
    expect(planWrite("sendMessageDraft", { chat_id: 1, draft_id: 3 })).toMatchObject({
      key: "draft:3",
      priority: Priority.edit,
      idempotent: true,
      paced: false,
    });
    expect(planWrite("setMyCommands", { commands: [] })).toMatchObject({
      methodClass: "other",
      chatId: undefined,
    });
    expect(planWrite("pinChatMessage", { chat_id: 3, message_id: 1 })).toMatchObject({
      chatId: 3,
      paced: false,
    });
  });

  it("leaves out what a missing or malformed field would name", () => {
    expect(planWrite("editMessageText", { chat_id: "", message_id: 1.5 })).toMatchObject({
      chatId: undefined,
      key: undefined,
    });
    expect(planWrite("deleteMessage", { chat_id: 1 })).toMatchObject({
      key: undefined,
      supersedes: [],
    });
    expect(planWrite("sendMessageDraft", { chat_id: 1 })).toMatchObject({ key: undefined });
  });
});

describe("writeKeys", () => {
  it("is one scheme: a text edit is edit:<id>, the other edits of a message add their method", () => {
    expect(writeKeys.edit(5)).toBe("edit:5");
    expect(writeKeys.edit(5, "editMessageReplyMarkup")).toBe("edit:5:editMessageReplyMarkup");
    expect(writeKeys.editsOf(5)).toContain("edit:5");
    expect(writeKeys.editsOf(5)).toHaveLength(7);
    expect(writeKeys.delete(5)).toBe("delete:5");
    expect(writeKeys.replace(5)).toBe("replace:5");
    expect(writeKeys.draft(9)).toBe("draft:9");
    expect(writeKeys.draft(9, "sendRichMessageDraft")).toBe("draft:9:sendRichMessageDraft");
    expect(writeKeys.callback("q")).toBe("callback:q");
    expect(writeKeys.chatAction()).toBe("chat-action");
    expect(writeKeys.chatAction(4, "b1")).toBe("chat-action:business:b1:thread:4");
    expect(Object.isFrozen(writeKeys)).toBe(true);
  });
});

describe("replacingProgress", () => {
  it("drops the progress message's pending edits, and deletes it only after the final", async () => {
    const outbox = new TelegramOutbox({ privateChatRps: 0, globalRps: 0 });
    const calls: string[] = [];
    const call =
      (name: string, result: unknown = true) =>
      async () => {
        calls.push(name);
        return result;
      };
    const edit = outbox.enqueue(
      writeOperation(planWrite("editMessageCaption", { chat_id: 1, message_id: 10 }), call("edit")),
    );
    const send = writeOperation(planWrite("sendMessage", { chat_id: 1 }), call("send", "sent"));
    const final = await outbox.enqueue(replacingProgress(send, 10, call("delete")));
    expect(await edit).toMatchObject({ status: "superseded", reason: "dropped" });
    expect(final).toMatchObject({ status: "delivered", result: "sent" });
    expect(await (final as OutboxDelivered<unknown>).followUp).toMatchObject({
      status: "delivered",
      result: true,
    });
    expect(calls).toEqual(["send", "delete"]);
    await outbox.close();
  });

  it("is keyed by the progress message, so a second final replaces a pending first", () => {
    const send = writeOperation(planWrite("sendMessage", { chat_id: 1 }), async () => "x");
    const pair = replacingProgress(send, 10, async () => true);
    expect(pair).toMatchObject({
      chatId: 1,
      key: "replace:10",
      priority: Priority.send,
      supersedes: writeKeys.editsOf(10),
    });
    expect(pair.followUp?.("x")).toMatchObject({
      chatId: 1,
      key: "delete:10",
      priority: Priority.delete,
      idempotent: true,
      supersedes: writeKeys.editsOf(10),
    });
  });
});

describe("isConnectFailure", () => {
  it("knows the failures after which the request never left, however they are wrapped", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    expect(isConnectFailure(refused)).toBe(true);
    expect(isConnectFailure(new TypeError("fetch failed", { cause: refused }))).toBe(true);
    expect(isConnectFailure(new AggregateError([refused]))).toBe(true);
    expect(isConnectFailure({ code: "UND_ERR_CONNECT_TIMEOUT" })).toBe(true);
    expect(isConnectFailure({ code: "ECONNRESET" })).toBe(false);
    expect(isConnectFailure(new Error("no code"))).toBe(false);
    expect(networkErrorCode(new TypeError("fetch failed", { cause: refused }))).toBe(
      "ECONNREFUSED",
    );
    expect(networkErrorCode("nothing")).toBeUndefined();
  });
});

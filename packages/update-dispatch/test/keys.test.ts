// The key of every update type: the seed's rules exactly, telepace's keys for the types the seed
// sends to Other, and malformed or future updates.

import type { Update } from "@grammyjs/types";
import { describe, expect, it } from "vitest";
import { type DispatchKey, dispatchKeyOf } from "../src/dispatcher/dispatch-key.js";
import { principalKeyOf, UpdateDispatcher } from "../src/index.js";
import {
  ANONYMOUS_ADMIN,
  CHANNEL_BOT,
  channelChat,
  editedPrivateMessage,
  futureUpdate,
  groupChat,
  groupMessage,
  messageIn,
  pollUpdate,
  privateChat,
  privateMessage,
  supergroupChat,
  TELEGRAM_SERVICE_USER,
  user,
} from "./fixtures.js";

const GROUP = -1001234;
const OTHER_GROUP = -1005678;

function key(update: Update): DispatchKey {
  return dispatchKeyOf(update);
}

function cast(update: unknown): Update {
  return update as Update;
}

const member = {
  old_chat_member: { status: "left", user: user(5) },
  new_chat_member: { status: "member", user: user(5) },
  date: 1,
};

describe("seed keys: messages", () => {
  it("a private message is keyed by its sender", () => {
    expect(key(privateMessage(1, 42))).toEqual({ kind: "private", id: 42 });
  });

  it("a private message without `from` goes to Other", () => {
    const message = { ...messageIn(privateChat(42), 42) } as Record<string, unknown>;
    delete message.from;
    expect(key(cast({ update_id: 1, message })).kind).toBe("other");
  });

  it("group and supergroup messages are keyed by chat and sender", () => {
    const inGroup = key({ update_id: 1, message: messageIn(groupChat(GROUP), 42) });
    const inSupergroup = key(groupMessage(2, GROUP, 42));
    expect(inGroup).toEqual({ kind: "group-user", id: `gu:${GROUP}:42` });
    expect(inSupergroup).toEqual(inGroup);
    expect(key(groupMessage(3, GROUP, 77))).not.toEqual(inSupergroup);
    expect(key(groupMessage(4, OTHER_GROUP, 42))).not.toEqual(inSupergroup);
  });

  it("the same user in a private chat and in a group are different principals", () => {
    expect(key(privateMessage(1, 42))).not.toEqual(key(groupMessage(2, GROUP, 42)));
  });

  it("group-authored by sender_chat.id == chat.id: keyed by the chat", () => {
    const update = groupMessage(1, GROUP, ANONYMOUS_ADMIN, { sender_chat: supergroupChat(GROUP) });
    expect(key(update)).toEqual({ kind: "group-control", id: `gc:${GROUP}` });
    // The sender_chat rule alone is enough, whoever `from` is.
    const withOtherFrom = groupMessage(2, GROUP, 42, { sender_chat: supergroupChat(GROUP) });
    expect(key(withOtherFrom)).toEqual(key(update));
  });

  it("group-authored by the anonymous admin user (1087968824): keyed by the chat", () => {
    expect(key(groupMessage(1, GROUP, ANONYMOUS_ADMIN))).toEqual({
      kind: "group-control",
      id: `gc:${GROUP}`,
    });
  });

  it("not group-authored: sender_chat of another chat keeps the (chat, from) key", () => {
    // A linked channel's automatic forward: from = 777000, sender_chat = the channel.
    const forward = groupMessage(1, GROUP, TELEGRAM_SERVICE_USER, {
      sender_chat: channelChat(-100999),
      is_automatic_forward: true,
    });
    expect(key(forward)).toEqual({
      kind: "group-user",
      id: `gu:${GROUP}:${TELEGRAM_SERVICE_USER}`,
    });
    // A user posting as their channel: from = Channel_Bot, sender_chat = that channel.
    const asChannel = groupMessage(2, GROUP, CHANNEL_BOT, { sender_chat: channelChat(-100888) });
    expect(key(asChannel)).toEqual({ kind: "group-user", id: `gu:${GROUP}:${CHANNEL_BOT}` });
  });

  it("a group message without `from` is group-control work of the chat", () => {
    const message = { ...messageIn(supergroupChat(GROUP), 42) } as Record<string, unknown>;
    delete message.from;
    expect(key(cast({ update_id: 1, message }))).toEqual({
      kind: "group-control",
      id: `gc:${GROUP}`,
    });
  });

  it("both migration messages are group-control work of their own chat", () => {
    const oldGroup = {
      update_id: 1,
      message: messageIn(groupChat(-42), 5, { migrate_to_chat_id: GROUP }),
    };
    const newSupergroup = groupMessage(2, GROUP, 5, { migrate_from_chat_id: -42 });
    expect(key(oldGroup)).toEqual({ kind: "group-control", id: "gc:-42" });
    expect(key(newSupergroup)).toEqual({ kind: "group-control", id: `gc:${GROUP}` });
  });

  it("a message in a chat of another type goes to Other", () => {
    const update = cast({ update_id: 1, message: messageIn(channelChat(GROUP) as never, 5) });
    expect(key(update).kind).toBe("other");
  });

  it("edited messages share their source's key, in private chats and groups", () => {
    expect(key(editedPrivateMessage(2, 42))).toEqual(key(privateMessage(1, 42)));
    const edited: Update = {
      update_id: 3,
      edited_message: { ...messageIn(supergroupChat(GROUP), 42), edit_date: 2 },
    };
    expect(key(edited)).toEqual(key(groupMessage(4, GROUP, 42)));
  });
});

describe("seed keys: membership", () => {
  it("chat_member is group-control work of the chat", () => {
    const update = cast({
      update_id: 1,
      chat_member: { chat: supergroupChat(GROUP), from: user(9), ...member },
    });
    expect(key(update)).toEqual({ kind: "group-control", id: `gc:${GROUP}` });
  });

  it("my_chat_member is group-control work of the chat, in private chats too (as in the seed)", () => {
    const inGroup = cast({
      update_id: 1,
      my_chat_member: { chat: groupChat(GROUP), from: user(9), ...member },
    });
    const blocked = cast({
      update_id: 2,
      my_chat_member: { chat: privateChat(42), from: user(42), ...member },
    });
    expect(key(inGroup)).toEqual({ kind: "group-control", id: `gc:${GROUP}` });
    expect(key(blocked)).toEqual({ kind: "group-control", id: "gc:42" });
  });

  it("membership updates of a chat share the key of its group-authored messages", () => {
    const update = cast({
      update_id: 1,
      chat_member: { chat: supergroupChat(GROUP), from: user(9), ...member },
    });
    expect(key(update)).toEqual(key(groupMessage(2, GROUP, ANONYMOUS_ADMIN)));
  });
});

describe("telepace keys for updates the seed sends to Other", () => {
  const buttonMessage = (chat: unknown) => ({ message_id: 7, date: 1, chat });
  /** User 42 pressing a button of `message`. */
  const pressed = (updateId: number, message: unknown) =>
    cast({
      update_id: updateId,
      callback_query: { id: "q", from: user(42), chat_instance: "i", message },
    });

  it("callback_query in a private chat: the presser's private key", () => {
    const update = pressed(1, buttonMessage(privateChat(42)));
    expect(key(update)).toEqual(key(privateMessage(2, 42)));
  });

  it("callback_query in a group or channel: (chat, presser)", () => {
    const inGroup = pressed(1, buttonMessage(supergroupChat(GROUP)));
    expect(key(inGroup)).toEqual(key(groupMessage(2, GROUP, 42)));
    const inChannel = pressed(3, buttonMessage(channelChat(-100777)));
    expect(key(inChannel)).toEqual({ kind: "group-user", id: "gu:-100777:42" });
  });

  it("callback_query on an inaccessible message still uses its chat", () => {
    const update = pressed(1, { message_id: 7, date: 0, chat: supergroupChat(GROUP) });
    expect(key(update)).toEqual(key(groupMessage(2, GROUP, 42)));
  });

  it("callback_query from an inline message (no chat): the presser's user key", () => {
    const update = cast({
      update_id: 1,
      callback_query: { id: "q", from: user(42), chat_instance: "i", inline_message_id: "m" },
    });
    expect(key(update)).toEqual({ kind: "user", id: "u:42" });
  });

  it.each([
    ["inline_query", { id: "q", from: user(42), query: "", offset: "" }],
    ["chosen_inline_result", { result_id: "r", from: user(42), query: "" }],
    ["shipping_query", { id: "s", from: user(42), invoice_payload: "p", shipping_address: {} }],
    [
      "pre_checkout_query",
      { id: "c", from: user(42), currency: "XTR", total_amount: 1, invoice_payload: "p" },
    ],
    ["purchased_paid_media", { from: user(42), paid_media_payload: "p" }],
  ])("%s: the sender's user key", (field, payload) => {
    expect(key(cast({ update_id: 1, [field]: payload }))).toEqual({ kind: "user", id: "u:42" });
  });

  it.each([
    ["business_connection", { id: "bc", user: user(42), user_chat_id: 42, date: 1 }],
    ["managed_bot", { user: user(42), bot: { ...user(43), is_bot: true } }],
    ["subscription", { user: user(42), invoice_payload: "p", state: "active" }],
  ])("%s: the user's user key", (field, payload) => {
    expect(key(cast({ update_id: 1, [field]: payload }))).toEqual({ kind: "user", id: "u:42" });
  });

  it("user keys are separate from the same user's private chat", () => {
    const inline = cast({
      update_id: 1,
      inline_query: { id: "q", from: user(42), query: "", offset: "" },
    });
    expect(key(inline)).not.toEqual(key(privateMessage(2, 42)));
  });

  it("stopped_message_generation: the user's user key, not behind the generation in the private queue", () => {
    const update = cast({
      update_id: 1,
      stopped_message_generation: { chat: privateChat(42), draft_id: 3 },
    });
    expect(key(update)).toEqual({ kind: "user", id: "u:42" });
    expect(key(update)).not.toEqual(key(privateMessage(2, 42)));
  });

  it("channel_post and edited_channel_post share the channel's chat key", () => {
    const post = cast({
      update_id: 1,
      channel_post: { message_id: 1, date: 1, chat: channelChat(-100777), text: "x" },
    });
    const edited = cast({
      update_id: 2,
      edited_channel_post: {
        message_id: 1,
        date: 1,
        edit_date: 2,
        chat: channelChat(-100777),
        text: "y",
      },
    });
    expect(key(post)).toEqual({ kind: "chat", id: "c:-100777" });
    expect(key(edited)).toEqual(key(post));
  });

  it("business messages, edits and deletions share (connection, chat); the connection matters", () => {
    const businessMessage = (field: string, connection: string, updateId: number) =>
      cast({
        update_id: updateId,
        [field]: {
          ...messageIn(privateChat(42), 42),
          business_connection_id: connection,
          edit_date: 2,
        },
      });
    const message = businessMessage("business_message", "conn-a", 1);
    expect(key(message)).toEqual({ kind: "business", id: "b:42:conn-a" });
    expect(key(businessMessage("edited_business_message", "conn-a", 2))).toEqual(key(message));
    const deleted = cast({
      update_id: 3,
      deleted_business_messages: {
        business_connection_id: "conn-a",
        chat: privateChat(42),
        message_ids: [1],
      },
    });
    expect(key(deleted)).toEqual(key(message));
    expect(key(businessMessage("business_message", "conn-b", 4))).not.toEqual(key(message));
    // The business chat id may coincide with an ordinary bot chat: still a different key.
    expect(key(message)).not.toEqual(key(privateMessage(5, 42)));
  });

  it("a business message without a connection id goes to Other", () => {
    const update = cast({ update_id: 1, business_message: messageIn(privateChat(42), 42) });
    expect(key(update).kind).toBe("other");
  });

  it("guest_message: (chat, sender) in a namespace of its own", () => {
    const guest = cast({
      update_id: 1,
      guest_message: messageIn(supergroupChat(GROUP), 42, { guest_query_id: "g" }),
    });
    expect(key(guest)).toEqual({ kind: "guest", id: `g:${GROUP}:42` });
    expect(key(guest)).not.toEqual(key(groupMessage(2, GROUP, 42)));
  });

  it("poll stays Other (no chat, no user)", () => {
    expect(key(pollUpdate(1)).kind).toBe("other");
  });

  it("poll_answer: the voter's user key, or the voting chat", () => {
    const byUser = cast({
      update_id: 1,
      poll_answer: { poll_id: "p", user: user(42), option_ids: [0], option_persistent_ids: [] },
    });
    const byChat = cast({
      update_id: 2,
      poll_answer: {
        poll_id: "p",
        voter_chat: channelChat(-100777),
        option_ids: [0],
        option_persistent_ids: [],
      },
    });
    expect(key(byUser)).toEqual({ kind: "user", id: "u:42" });
    expect(key(byChat)).toEqual({ kind: "chat", id: "c:-100777" });
  });

  it("message_reaction: like a message of the reacting user; anonymous ones by the chat", () => {
    const reaction = (chat: unknown, actor: Record<string, unknown>) =>
      cast({
        update_id: 1,
        message_reaction: {
          chat,
          message_id: 1,
          date: 1,
          old_reaction: [],
          new_reaction: [],
          ...actor,
        },
      });
    expect(key(reaction(supergroupChat(GROUP), { user: user(42) }))).toEqual(
      key(groupMessage(2, GROUP, 42)),
    );
    expect(key(reaction(privateChat(42), { user: user(42) }))).toEqual(key(privateMessage(3, 42)));
    expect(key(reaction(supergroupChat(GROUP), { actor_chat: supergroupChat(GROUP) }))).toEqual({
      kind: "chat",
      id: `c:${GROUP}`,
    });
  });

  it.each([
    [
      "message_reaction_count",
      { chat: supergroupChat(GROUP), message_id: 1, date: 1, reactions: [] },
    ],
    [
      "chat_boost",
      {
        chat: supergroupChat(GROUP),
        boost: {
          boost_id: "b",
          add_date: 1,
          expiration_date: 2,
          source: { source: "premium", user: user(4) },
        },
      },
    ],
    [
      "removed_chat_boost",
      {
        chat: supergroupChat(GROUP),
        boost_id: "b",
        remove_date: 1,
        source: { source: "premium", user: user(4) },
      },
    ],
  ])("%s: the chat as a whole", (field, payload) => {
    expect(key(cast({ update_id: 1, [field]: payload }))).toEqual({
      kind: "chat",
      id: `c:${GROUP}`,
    });
  });

  it("chat_join_request: (chat, requesting user), so requests of different users run in parallel", () => {
    const request = (userId: number) =>
      cast({
        update_id: userId,
        chat_join_request: {
          chat: supergroupChat(GROUP),
          from: user(userId),
          user_chat_id: userId,
          date: 1,
        },
      });
    expect(key(request(42))).toEqual(key(groupMessage(1, GROUP, 42)));
    expect(key(request(43))).not.toEqual(key(request(42)));
  });
});

describe("malformed and future updates", () => {
  it.each([
    ["an unknown update type", futureUpdate(1)],
    ["no payload at all", { update_id: 1 }],
    ["null", null],
    ["a string", "update"],
    ["a message that is not an object", { update_id: 1, message: "hi" }],
    ["a message without chat", { update_id: 1, message: { from: user(1) } }],
    [
      "a group message with a string chat id",
      { update_id: 1, message: { chat: { id: "x", type: "group" }, from: user(1) } },
    ],
    ["a callback without from", { update_id: 1, callback_query: { id: "q" } }],
    ["chat_member without chat", { update_id: 1, chat_member: {} }],
    ["a payload field set to undefined", { update_id: 1, message: undefined }],
  ])("%s gets the Other key and does not throw", (_, update) => {
    expect(key(cast(update))).toEqual({ kind: "other", id: "o" });
  });

  it("a private message whose sender id is not an integer goes to Other", () => {
    const update = cast({ update_id: 1, message: { chat: privateChat(1), from: { id: 1.5 } } });
    expect(key(update).kind).toBe("other");
  });

  it("a field named like an Object.prototype member is not mistaken for a payload", () => {
    expect(key(cast({ update_id: 1, constructor: {}, toString: {} })).kind).toBe("other");
  });

  it("a hostile update whose getters throw still gets a key, and enqueue does not throw", async () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("no");
        },
        ownKeys: () => ["message"],
        getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true }),
      },
    );
    expect(key(cast(hostile)).kind).toBe("other");
    const dispatcher = new UpdateDispatcher(() => {});
    expect(await dispatcher.enqueue(cast(hostile))).toEqual({
      status: "accepted",
      keyKind: "other",
    });
    await dispatcher.drain();
  });

  it("enqueue accepts every malformed shape under a key and processes it", async () => {
    const seen: unknown[] = [];
    const dispatcher = new UpdateDispatcher((update) => {
      seen.push(update);
    });
    const shapes = [null, "update", 42, { update_id: "7" }, futureUpdate(8), { message: 1 }];
    for (const shape of shapes) {
      expect(await dispatcher.enqueue(cast(shape))).toEqual({
        status: "accepted",
        keyKind: "other",
      });
    }
    await dispatcher.drain();
    expect(seen).toEqual(shapes);
  });

  it("enqueue reports the key kind of every keyed update type", async () => {
    const dispatcher = new UpdateDispatcher(() => {});
    const kinds = [];
    for (const update of [
      privateMessage(1, 1),
      groupMessage(2, GROUP, 1),
      groupMessage(3, GROUP, ANONYMOUS_ADMIN),
      cast({ update_id: 4, channel_post: { message_id: 1, date: 1, chat: channelChat(-1) } }),
      cast({ update_id: 5, inline_query: { id: "q", from: user(1), query: "", offset: "" } }),
      pollUpdate(6),
    ]) {
      const result = await dispatcher.enqueue(update);
      kinds.push(result.status === "accepted" ? result.keyKind : result.status);
    }
    expect(kinds).toEqual(["private", "group-user", "group-control", "chat", "user", "other"]);
    await dispatcher.close();
  });

  it("principalKeyOf names the principal as one string: equal for updates that run in turn", () => {
    expect(principalKeyOf(privateMessage(1, 1))).toBe(principalKeyOf(privateMessage(2, 1)));
    expect(principalKeyOf(privateMessage(1, 1))).not.toBe(principalKeyOf(privateMessage(2, 2)));
    expect(principalKeyOf(groupMessage(3, GROUP, 1))).toMatch(/^group-user:/);
    expect(principalKeyOf(pollUpdate(4))).toBe("other:o");
  });

  it("keys a user in a group the same way past thousands of groups (the prefix cache)", () => {
    for (let index = 0; index < 5_000; index++) {
      const chatId = -1_000_000_000_000 - index;
      expect(key(groupMessage(index + 1, chatId, 7)).id).toBe(`gu:${chatId}:7`);
    }
    expect(key(groupMessage(1, GROUP, 7))).toEqual({ kind: "group-user", id: `gu:${GROUP}:7` });
  });

  it("principalKeyOf keeps its strings across releases (shared queues hold them)", () => {
    expect(principalKeyOf(privateMessage(1, 42))).toBe("private:p:42");
    expect(principalKeyOf(groupMessage(2, GROUP, 7))).toBe(`group-user:gu:${GROUP}:7`);
  });
});

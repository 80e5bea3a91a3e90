// The principal key of an update: updates with the same key run one after another, different keys
// run in parallel. The key is private scheduling policy; only its kind is public.

import type { Update } from "@grammyjs/types";

/**
 * The class of principal an update was keyed by. Public so stats and results can say where work
 * sits; the key itself (which ids it holds) stays private.
 *
 * - `private` — a user in their private chat with the bot.
 * - `group-user` — one user acting in one group, supergroup or channel.
 * - `group-control` — work of a group as a whole: group-authored messages, membership, migration.
 * - `chat` — a chat as a whole where no single user acts: channel posts, reaction counts, boosts.
 * - `user` — a user outside any chat: inline mode, payments, business connection, subscriptions.
 * - `business` — one chat of one business connection.
 * - `guest` — one user in a chat where the bot was summoned as a guest.
 * - `other` — updates with no principal; they share one key.
 */
export type KeyKind =
  | "private"
  | "group-user"
  | "group-control"
  | "chat"
  | "user"
  | "business"
  | "guest"
  | "other";

/** Every {@link KeyKind}, in a fixed order (used to build per-kind counters). */
export const KEY_KINDS: readonly KeyKind[] = Object.freeze([
  "private",
  "group-user",
  "group-control",
  "chat",
  "user",
  "business",
  "guest",
  "other",
]);

/**
 * A principal key: its kind and an identity that is unique across kinds. A private chat's is the
 * user id itself, a number (the most common key costs no string to build or hash); every other
 * kind's is a string with a prefix of its own.
 */
export interface DispatchKey {
  readonly kind: KeyKind;
  readonly id: PrincipalId;
}

/** The identity of a principal: a private chat's user id, or a prefixed string. */
export type PrincipalId = string | number;

/** GroupAnonymousBot: the `from` of messages an anonymous group admin sends. */
const ANONYMOUS_ADMIN_USER_ID = 1087968824;

const OTHER: DispatchKey = Object.freeze({ kind: "other", id: "o" });

// Updates may be malformed or newer than @grammyjs/types, so every field is read defensively and a
// missing or odd field degrades to a coarser key instead of throwing.
type Fields = Readonly<Record<string, unknown>>;

function fields(value: unknown): Fields | undefined {
  return typeof value === "object" && value !== null ? (value as Fields) : undefined;
}

function idOf(value: unknown): number | undefined {
  const id = fields(value)?.id;
  return Number.isSafeInteger(id) ? (id as number) : undefined;
}

const privateKey = (userId: number): DispatchKey => ({ kind: "private", id: userId });
const userKey = (userId: number): DispatchKey => ({ kind: "user", id: `u:${userId}` });
const chatKey = (chatId: number): DispatchKey => ({ kind: "chat", id: `c:${chatId}` });
const groupControlKey = (chatId: number): DispatchKey => ({
  kind: "group-control",
  id: `gc:${chatId}`,
});
// Group ids are beyond 2^31, and turning such a number into a string costs more than everything
// else keying an update does; a group's key prefix is made once and kept (a bounded cache).
const GROUP_PREFIXES_KEPT = 4096;
const groupPrefixes = new Map<number, string>();

function groupPrefixOf(chatId: number): string {
  let prefix = groupPrefixes.get(chatId);
  if (prefix === undefined) {
    if (groupPrefixes.size >= GROUP_PREFIXES_KEPT) groupPrefixes.clear();
    prefix = `gu:${chatId}:`;
    groupPrefixes.set(chatId, prefix);
  }
  return prefix;
}

const groupUserKey = (chatId: number, userId: number): DispatchKey => ({
  kind: "group-user",
  id: groupPrefixOf(chatId) + userId,
});

function isGroupChat(type: unknown): boolean {
  return type === "group" || type === "supergroup";
}

/** The classic rule for `message` and `edited_message`, so an edit shares its source's key. */
function messageKey(value: unknown): DispatchKey {
  const message = fields(value);
  const chat = fields(message?.chat);
  if (message === undefined || chat === undefined) return OTHER;
  const fromId = idOf(message.from);
  if (chat.type === "private") return fromId === undefined ? OTHER : privateKey(fromId);
  if (!isGroupChat(chat.type)) return OTHER;
  const chatId = idOf(chat);
  if (chatId === undefined) return OTHER;
  const isMigration =
    message.migrate_to_chat_id !== undefined || message.migrate_from_chat_id !== undefined;
  const isGroupAuthored =
    idOf(message.sender_chat) === chatId || fromId === ANONYMOUS_ADMIN_USER_ID;
  if (isMigration || isGroupAuthored || fromId === undefined) return groupControlKey(chatId);
  return groupUserKey(chatId, fromId);
}

/** The classic rule for `chat_member` and `my_chat_member`: group-control work of the chat. */
function memberKey(value: unknown): DispatchKey {
  const chatId = idOf(fields(value)?.chat);
  return chatId === undefined ? OTHER : groupControlKey(chatId);
}

// The keys below are telepace's: a classic per-key dispatcher sends all of these to one `other`
// key.

/** A button press belongs to the presser in the chat of the message that carries the button. */
function callbackQueryKey(value: unknown): DispatchKey {
  const query = fields(value);
  const fromId = idOf(query?.from);
  if (fromId === undefined) return OTHER;
  const chat = fields(fields(query?.message)?.chat);
  const chatId = idOf(chat);
  if (chat?.type === "private") return privateKey(fromId);
  if (chatId !== undefined && (isGroupChat(chat?.type) || chat?.type === "channel")) {
    return groupUserKey(chatId, fromId);
  }
  // Inline-mode messages have no chat: the presser is the only principal.
  return userKey(fromId);
}

function fromUserKey(value: unknown): DispatchKey {
  const userId = idOf(fields(value)?.from);
  return userId === undefined ? OTHER : userKey(userId);
}

function userFieldKey(value: unknown): DispatchKey {
  const userId = idOf(fields(value)?.user);
  return userId === undefined ? OTHER : userKey(userId);
}

function wholeChatKey(value: unknown): DispatchKey {
  const chatId = idOf(fields(value)?.chat);
  return chatId === undefined ? OTHER : chatKey(chatId);
}

/** A stop request must not queue behind the generation it stops, so it is not the private key. */
function stoppedGenerationKey(value: unknown): DispatchKey {
  const chatId = idOf(fields(value)?.chat);
  return chatId === undefined ? OTHER : userKey(chatId);
}

/** Business chat ids may coincide with ordinary bot chats, so the connection is part of the key. */
function businessKey(value: unknown, connectionId: unknown): DispatchKey {
  const chatId = idOf(fields(value)?.chat);
  if (chatId === undefined || typeof connectionId !== "string" || connectionId === "") return OTHER;
  // The chat id goes first: it has no ':' in it, so the key string cannot be ambiguous.
  return { kind: "business", id: `b:${chatId}:${connectionId}` };
}

function businessMessageKey(value: unknown): DispatchKey {
  return businessKey(value, fields(value)?.business_connection_id);
}

/** Guest chats may coincide with the bot's own chats, so they get a namespace of their own. */
function guestMessageKey(value: unknown): DispatchKey {
  const message = fields(value);
  const chatId = idOf(message?.chat);
  const fromId = idOf(message?.from);
  if (chatId === undefined || fromId === undefined) return OTHER;
  return { kind: "guest", id: `g:${chatId}:${fromId}` };
}

function pollAnswerKey(value: unknown): DispatchKey {
  const answer = fields(value);
  const userId = idOf(answer?.user);
  if (userId !== undefined) return userKey(userId);
  const voterChatId = idOf(answer?.voter_chat);
  return voterChatId === undefined ? OTHER : chatKey(voterChatId);
}

/** A reaction is keyed like a message by the same user in the same chat. */
function reactionKey(value: unknown): DispatchKey {
  const reaction = fields(value);
  const chat = fields(reaction?.chat);
  const chatId = idOf(chat);
  if (chatId === undefined) return OTHER;
  const userId = idOf(reaction?.user);
  if (userId === undefined) return chatKey(chatId);
  return chat?.type === "private" ? privateKey(userId) : groupUserKey(chatId, userId);
}

/** A join request is the requesting user's, so a raid of requests runs in parallel. */
function joinRequestKey(value: unknown): DispatchKey {
  const request = fields(value);
  const chatId = idOf(request?.chat);
  const fromId = idOf(request?.from);
  if (chatId === undefined || fromId === undefined) return OTHER;
  return groupUserKey(chatId, fromId);
}

// Typed over Update's fields, so a field added to @grammyjs/types fails the typecheck here until
// someone decides its key. `poll` has neither a chat nor a user: it stays on the shared key.
const keyRules: Readonly<
  Record<Exclude<keyof Update, "update_id" | "poll">, (value: unknown) => DispatchKey>
> = {
  message: messageKey,
  edited_message: messageKey,
  chat_member: memberKey,
  my_chat_member: memberKey,
  callback_query: callbackQueryKey,
  channel_post: wholeChatKey,
  edited_channel_post: wholeChatKey,
  business_message: businessMessageKey,
  edited_business_message: businessMessageKey,
  deleted_business_messages: businessMessageKey,
  business_connection: userFieldKey,
  guest_message: guestMessageKey,
  stopped_message_generation: stoppedGenerationKey,
  inline_query: fromUserKey,
  chosen_inline_result: fromUserKey,
  shipping_query: fromUserKey,
  pre_checkout_query: fromUserKey,
  purchased_paid_media: fromUserKey,
  managed_bot: userFieldKey,
  subscription: userFieldKey,
  poll_answer: pollAnswerKey,
  message_reaction: reactionKey,
  message_reaction_count: wholeChatKey,
  chat_boost: wholeChatKey,
  removed_chat_boost: wholeChatKey,
  chat_join_request: joinRequestKey,
};

const KEY_BY_FIELD: ReadonlyMap<string, (value: unknown) => DispatchKey> = new Map(
  Object.entries(keyRules),
);

/**
 * The principal key of an update. Never throws: a malformed update, or one of a type newer than
 * this code, gets the shared `other` key.
 */
export function dispatchKeyOf(update: Update): DispatchKey {
  const payload = fields(update);
  if (payload === undefined) return OTHER;
  try {
    // An update carries exactly one payload field besides update_id; the first known one decides.
    for (const field in payload) {
      const keyOf = KEY_BY_FIELD.get(field);
      const value = payload[field];
      if (keyOf !== undefined && value !== undefined) return keyOf(value);
    }
  } catch {
    // Only a hostile object (a throwing getter or proxy) gets here; it still gets a key.
  }
  return OTHER;
}

/**
 * The principal of an update as one string (`<kind>:<identity>`), for queues outside this package
 * that keep one FIFO per principal (a Redis queue shared by several workers does). Equal strings
 * mean the dispatcher would run the two updates one after the other.
 */
export function principalKeyOf(update: Update): string {
  const { kind, id } = dispatchKeyOf(update);
  // The same strings as when the private key was `p:<user id>`: queued updates keep their key.
  return typeof id === "number" ? `${kind}:p:${id}` : `${kind}:${id}`;
}

// What every message a bot sends goes through: reply target, flood limits, storage, transcript
// and counters. Shared by sendMessage, sendDocument and sendPhoto, and by the edit methods.

import type {
  InlineKeyboardMarkup,
  Message,
  MessageEntity,
  ReplyKeyboardMarkup,
} from "@grammyjs/types";
import { publish } from "../diagnostics.js";
import type { AnyReplyMarkup } from "../text/reply-markup.js";
import { inlineKeyboardOf } from "../text/reply-markup.js";
import { badRequest, tooManyRequests } from "../wire/api-failure.js";
import type { RequestParams } from "../wire/request-params.js";
import { type BotRecord, botAsUser } from "../world/bot-record.js";
import { type ChatRecord, type StoredMessage, shallow } from "../world/chat-record.js";
import { deepFreeze } from "../world/deep-freeze.js";
import type { SimWorld } from "../world/sim-world.js";
import type { BotApiMethod } from "./known-methods.js";

/** The context every Bot API method handler receives. */
export interface MethodContext {
  readonly world: SimWorld;
  readonly bot: BotRecord;
  readonly params: RequestParams;
  readonly method: BotApiMethod;
  /** Aborts when the client goes away before the answer. */
  readonly signal: AbortSignal;
}

/** A successful result with the optional `description` some methods add (setWebhook). */
export class ApiSuccess {
  constructor(
    readonly result: unknown,
    readonly description?: string,
  ) {}
}

/**
 * The message a send replies to (reply_parameters or the legacy reply_to_message_id), or
 * `undefined`. A missing target fails with "message to be replied not found" unless the caller
 * allowed sending without it.
 */
export function replyTarget(params: RequestParams, chat: ChatRecord): Message | undefined {
  let messageId = params.messageId("reply_to_message_id");
  let allowWithout = params.bool("allow_sending_without_reply");
  let otherChat = false;
  const raw = params.json("reply_parameters");
  if (raw !== undefined) {
    if ("error" in raw || typeof raw.value !== "object" || raw.value === null) {
      throw badRequest("can't parse reply parameters JSON object");
    }
    const value = raw.value as Record<string, unknown>;
    messageId = typeof value.message_id === "number" ? value.message_id : 0;
    allowWithout = value.allow_sending_without_reply === true;
    otherChat = value.chat_id !== undefined && String(value.chat_id) !== String(chat.id);
  }
  if (messageId <= 0) return undefined;
  const target = otherChat ? undefined : chat.messages.get(messageId);
  if (target !== undefined) return shallow(target.message);
  if (allowWithout) return undefined;
  throw badRequest("message to be replied not found");
}

/**
 * Consults the bot's flood limits for one message into `chat`; throws the 429 (and counts it)
 * when a limit is exhausted.
 */
export function checkFlood(
  ctx: MethodContext,
  chat: ChatRecord,
  kind: "send" | "edit" | "draft",
): void {
  const decision = ctx.bot.limiter.tryConsume(chat.key, chat.isGroup, kind, ctx.world.now());
  if (decision.allowed) return;
  ctx.world.counters.tooManyRequests(chat.id);
  const fields = {
    botId: ctx.bot.id,
    chatId: chat.id,
    method: ctx.method,
    retryAfter: decision.retryAfter,
    scope: decision.scope,
  };
  publish("rate-limited", () => ({ type: "rate-limited", ...fields }));
  ctx.world.events.emit({
    type: "rate_limited",
    chat,
    botId: ctx.bot.id,
    method: ctx.method,
    retryAfter: decision.retryAfter,
    scope: decision.scope,
  });
  ctx.world.log("debug", fields, "bot-api-sim: flood limit");
  throw tooManyRequests(decision.retryAfter);
}

/** Text (or caption) with entities, the way a message carries them. */
export function withEntities(
  message: Record<string, unknown>,
  textField: "text" | "caption",
  text: string,
  entities: readonly MessageEntity[],
): void {
  if (textField === "caption" && text.length === 0) return;
  message[textField] = text;
  if (entities.length > 0)
    message[textField === "text" ? "entities" : "caption_entities"] = [...entities];
}

/**
 * Stores and records a message the bot sends. `content` holds the type-specific fields (text,
 * document, photo, caption…); the common ones are added here.
 */
export function commitBotMessage(
  ctx: MethodContext,
  chat: ChatRecord,
  content: Record<string, unknown>,
  markup: AnyReplyMarkup | undefined,
  replyTo: Message | undefined,
): Message {
  const { world, bot, params } = ctx;
  const message: Record<string, unknown> = {
    message_id: chat.allocateMessageId(),
    from: botAsUser(bot),
    chat: chat.chat(),
    date: world.unixNow(),
  };
  if (replyTo !== undefined) message.reply_to_message = replyTo;
  Object.assign(message, content);
  const keyboard = inlineKeyboardOf(markup);
  if (keyboard !== undefined) message.reply_markup = keyboard;
  if (params.bool("protect_content")) message.has_protected_content = true;
  const sent = deepFreeze(message) as unknown as Message;
  const stored: StoredMessage = {
    message: sent,
    senderBotId: bot.id,
    sentAtMs: world.now(),
    seenBy: new Set(),
  };
  chat.store(stored, world.options.maxMessagesPerChat);
  // Any message of the bot into the chat removes its draft, as Telegram's clients do.
  chat.draft.clear();
  const otherMarkup = markup !== undefined && !("inline_keyboard" in markup) ? markup : undefined;
  if (otherMarkup !== undefined) showReplyKeyboard(world, chat, bot.id, sent, otherMarkup);
  world.counters.add("messagesSent");
  world.record(chat, {
    kind: "send",
    actor: "bot",
    actorId: bot.id,
    method: ctx.method,
    messageId: sent.message_id,
    ...textOf(sent),
    message: sent,
    ...(otherMarkup === undefined ? {} : { replyMarkup: deepFreeze(otherMarkup) }),
  });
  return sent;
}

/**
 * A reply keyboard (or its removal) that came with a bot's message. With `selective` it concerns
 * only the users the message mentions and the sender of the message it replies to.
 */
function showReplyKeyboard(
  world: SimWorld,
  chat: ChatRecord,
  botId: number,
  sent: Message,
  markup: Exclude<AnyReplyMarkup, InlineKeyboardMarkup>,
): void {
  const isKeyboard = "keyboard" in markup;
  if (!isKeyboard && !("remove_keyboard" in markup)) return;
  const shown = isKeyboard
    ? { markup: deepFreeze(markup as ReplyKeyboardMarkup), messageId: sent.message_id, botId }
    : undefined;
  const selective = chat.kind !== "private" && markup.selective === true;
  chat.replyKeyboards.apply(shown, selective ? selectiveTargets(world, chat, sent) : "everyone");
}

/** The users a selective markup is for: those the message mentions, and the replied-to sender. */
function selectiveTargets(world: SimWorld, chat: ChatRecord, sent: Message): number[] {
  const targets = new Set<number>();
  const text = (sent as { text?: string }).text ?? (sent as { caption?: string }).caption ?? "";
  const entities =
    (sent as { entities?: MessageEntity[] }).entities ??
    (sent as { caption_entities?: MessageEntity[] }).caption_entities ??
    [];
  for (const entity of entities) {
    if (entity.type === "text_mention") targets.add(entity.user.id);
    if (entity.type !== "mention") continue;
    const username = text.slice(entity.offset + 1, entity.offset + entity.length).toLowerCase();
    for (const id of chat.members.keys()) {
      if (world.userById(id)?.username?.toLowerCase() === username) targets.add(id);
    }
  }
  const repliedTo = (sent as { reply_to_message?: Message }).reply_to_message?.from;
  if (repliedTo !== undefined && !repliedTo.is_bot) targets.add(repliedTo.id);
  return [...targets];
}

/** `{ text }` for a message with text or caption, else nothing. */
function textOf(message: Message): { text?: string } {
  const text = (message as { text?: string }).text ?? (message as { caption?: string }).caption;
  return text === undefined ? {} : { text };
}

/**
 * The stored message an edit method names (chat_id + message_id), checked for ownership. Inline
 * message ids do not exist in the simulator.
 */
export function messageToEdit(ctx: MethodContext, chat: ChatRecord | undefined): StoredMessage {
  const { params } = ctx;
  if (chat === undefined) {
    if (params.get("inline_message_id") === undefined) {
      throw badRequest("message identifier is not specified");
    }
    throw badRequest("MESSAGE_ID_INVALID");
  }
  const stored = chat.messages.get(params.messageId());
  if (stored === undefined) throw badRequest("message to edit not found");
  if (stored.senderBotId !== ctx.bot.id) throw badRequest("message can't be edited");
  return stored;
}

/**
 * Replaces a message by its edited version, records the edit and returns the new version.
 */
export function commitEdit(
  ctx: MethodContext,
  chat: ChatRecord,
  stored: StoredMessage,
  changes: Record<string, unknown>,
  removed: readonly string[],
): Message {
  const { world } = ctx;
  const next: Record<string, unknown> = {
    ...(stored.message as unknown as Record<string, unknown>),
  };
  for (const field of removed) delete next[field];
  Object.assign(next, changes, { edit_date: world.unixNow() });
  const message = deepFreeze(next) as unknown as Message;
  stored.message = message;
  world.counters.add("messagesEdited");
  world.record(chat, {
    kind: "edit",
    actor: "bot",
    actorId: ctx.bot.id,
    method: ctx.method,
    messageId: message.message_id,
    ...textOf(message),
    message,
  });
  return message;
}

/** JSON equality for comparing entity lists and keyboards. */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** Telegram's "not modified" error text. */
export const NOT_MODIFIED =
  "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";

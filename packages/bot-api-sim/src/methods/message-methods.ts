// Text messages and their life: sendMessage, editMessageText, editMessageCaption,
// editMessageReplyMarkup, deleteMessage, deleteMessages and sendChatAction.

import type { Message } from "@grammyjs/types";
import {
  characterLength,
  formatText,
  MAX_CAPTION_LENGTH,
  MAX_TEXT_LENGTH,
} from "../text/formatted-text.js";
import type { ParsedText } from "../text/parse-mode.js";
import { inlineKeyboardOf, parseReplyMarkup } from "../text/reply-markup.js";
import { badRequest } from "../wire/api-failure.js";
import type { ChatRecord } from "../world/chat-record.js";
import {
  checkFlood,
  commitBotMessage,
  commitEdit,
  type MethodContext,
  messageToEdit,
  NOT_MODIFIED,
  replyTarget,
  sameJson,
  withEntities,
} from "./bot-messages.js";
import { chatForBot } from "./chat-access.js";

/** Messages older than this cannot be deleted by bots. */
const DELETE_WINDOW_MS = 48 * 60 * 60 * 1000;

const CHAT_ACTIONS = new Set([
  "typing",
  "upload_photo",
  "record_video",
  "upload_video",
  "record_voice",
  "upload_voice",
  "upload_document",
  "choose_sticker",
  "find_location",
  "record_video_note",
  "upload_video_note",
  // Old names the real server still accepts.
  "record_audio",
  "upload_audio",
]);

/** The text of sendMessage/editMessageText with Telegram's checks. */
function messageText(ctx: MethodContext): ParsedText {
  const raw = ctx.params.get("text");
  if (raw === undefined) throw badRequest("message text is empty");
  const parsed = formatText({
    text: raw,
    parseMode: ctx.params.get("parse_mode"),
    entities: ctx.params.get("entities"),
  });
  if (parsed.text.length === 0) throw badRequest("message text is empty");
  if (characterLength(parsed.text) > MAX_TEXT_LENGTH) throw badRequest("message is too long");
  return parsed;
}

/** A caption with Telegram's checks (empty is allowed). */
export function captionText(ctx: MethodContext): ParsedText {
  const parsed = formatText({
    text: ctx.params.text("caption"),
    parseMode: ctx.params.get("parse_mode"),
    entities: ctx.params.get("caption_entities"),
  });
  if (characterLength(parsed.text) > MAX_CAPTION_LENGTH) {
    throw badRequest("message caption is too long");
  }
  return parsed;
}

/** sendMessage */
export function sendMessage(ctx: MethodContext): Message {
  const text = messageText(ctx);
  const markup = parseReplyMarkup(ctx.params.get("reply_markup"));
  const chat = chatForBot(ctx.world, ctx.bot, ctx.params.get("chat_id"), "write");
  const replyTo = replyTarget(ctx.params, chat);
  checkFlood(ctx, chat, "send");
  const content: Record<string, unknown> = {};
  withEntities(content, "text", text.text, text.entities);
  return commitBotMessage(ctx, chat, content, markup, replyTo);
}

/** The chat of an edit: absent when the call addresses an inline message instead. */
function editChat(ctx: MethodContext): ChatRecord | undefined {
  const chatId = ctx.params.get("chat_id");
  if (chatId === undefined && ctx.params.messageId() === 0) return undefined;
  return chatForBot(ctx.world, ctx.bot, chatId, "write");
}

/** editMessageText */
export function editMessageText(ctx: MethodContext): Message {
  const text = messageText(ctx);
  const markup = inlineKeyboardOf(parseReplyMarkup(ctx.params.get("reply_markup")));
  const chat = editChat(ctx);
  const stored = messageToEdit(ctx, chat);
  const current = stored.message as Message & { text?: string; entities?: unknown };
  if (current.text === undefined) throw badRequest("there is no text in the message to edit");
  if (
    current.text === text.text &&
    sameJson(current.entities, text.entities.length === 0 ? undefined : text.entities) &&
    sameJson(current.reply_markup, markup)
  ) {
    throw badRequest(NOT_MODIFIED);
  }
  checkFlood(ctx, chat as ChatRecord, "edit");
  const changes: Record<string, unknown> = {};
  withEntities(changes, "text", text.text, text.entities);
  if (markup !== undefined) changes.reply_markup = markup;
  const removed = ["entities", ...(markup === undefined ? ["reply_markup"] : [])];
  return commitEdit(ctx, chat as ChatRecord, stored, changes, removed);
}

/** editMessageCaption */
export function editMessageCaption(ctx: MethodContext): Message {
  const caption = captionText(ctx);
  const markup = inlineKeyboardOf(parseReplyMarkup(ctx.params.get("reply_markup")));
  const chat = editChat(ctx);
  const stored = messageToEdit(ctx, chat);
  const current = stored.message as Message & { caption?: string; caption_entities?: unknown };
  if ((current as { text?: string }).text !== undefined) {
    throw badRequest("there is no caption in the message to edit");
  }
  if (
    (current.caption ?? "") === caption.text &&
    sameJson(
      current.caption_entities,
      caption.entities.length === 0 ? undefined : caption.entities,
    ) &&
    sameJson(current.reply_markup, markup)
  ) {
    throw badRequest(NOT_MODIFIED);
  }
  checkFlood(ctx, chat as ChatRecord, "edit");
  const changes: Record<string, unknown> = {};
  withEntities(changes, "caption", caption.text, caption.entities);
  if (markup !== undefined) changes.reply_markup = markup;
  const removed = [
    "caption",
    "caption_entities",
    ...(markup === undefined ? ["reply_markup"] : []),
  ];
  return commitEdit(ctx, chat as ChatRecord, stored, changes, removed);
}

/** editMessageReplyMarkup */
export function editMessageReplyMarkup(ctx: MethodContext): Message {
  const markup = inlineKeyboardOf(parseReplyMarkup(ctx.params.get("reply_markup")));
  const chat = editChat(ctx);
  const stored = messageToEdit(ctx, chat);
  if (sameJson(stored.message.reply_markup, markup)) throw badRequest(NOT_MODIFIED);
  checkFlood(ctx, chat as ChatRecord, "edit");
  return commitEdit(
    ctx,
    chat as ChatRecord,
    stored,
    markup === undefined ? {} : { reply_markup: markup },
    markup === undefined ? ["reply_markup"] : [],
  );
}

/** Why a message cannot be deleted by this bot, or `undefined` when it can. */
function deleteRefusal(
  ctx: MethodContext,
  chat: ChatRecord,
  messageId: number,
): string | undefined {
  const stored = chat.messages.get(messageId);
  if (stored === undefined) return "message to delete not found";
  const own = stored.senderBotId === ctx.bot.id;
  if (chat.isGroup && !own && chat.bots.get(ctx.bot.id) !== "administrator") {
    return "message can't be deleted";
  }
  if (ctx.world.now() - stored.sentAtMs > DELETE_WINDOW_MS) {
    return "message can't be deleted for everyone";
  }
  return undefined;
}

function deleteOne(ctx: MethodContext, chat: ChatRecord, messageId: number): void {
  chat.messages.delete(messageId);
  ctx.world.counters.add("messagesDeleted");
  ctx.world.record(chat, {
    kind: "delete",
    actor: "bot",
    actorId: ctx.bot.id,
    method: ctx.method,
    messageId,
  });
}

function deleteChat(ctx: MethodContext): ChatRecord {
  const chatId = ctx.params.get("chat_id");
  if (chatId === undefined) throw badRequest("chat identifier is not specified");
  return chatForBot(ctx.world, ctx.bot, chatId, "read");
}

/** deleteMessage */
export function deleteMessage(ctx: MethodContext): true {
  const chat = deleteChat(ctx);
  const messageId = ctx.params.messageId();
  if (messageId === 0) throw badRequest("message identifier is not specified");
  const refusal = deleteRefusal(ctx, chat, messageId);
  if (refusal !== undefined) throw badRequest(refusal);
  deleteOne(ctx, chat, messageId);
  return true;
}

/** deleteMessages: deletes what it can of 1–100 ids, skipping the rest, like Telegram. */
export function deleteMessages(ctx: MethodContext): true {
  const chat = deleteChat(ctx);
  const parsed = ctx.params.json("message_ids");
  if (parsed === undefined) throw badRequest('parameter "message_ids" is required');
  if ("error" in parsed || !Array.isArray(parsed.value)) {
    throw badRequest("can't parse message identifiers JSON object");
  }
  const ids = parsed.value.filter(
    (id): id is number => typeof id === "number" && Number.isInteger(id) && id > 0,
  );
  if (ids.length === 0 || parsed.value.length > 100) {
    throw badRequest("too many message identifiers specified or none of them is valid");
  }
  const deletable = [...new Set(ids)].filter((id) => deleteRefusal(ctx, chat, id) === undefined);
  if (deletable.length === 0) throw badRequest("message to delete not found");
  for (const id of deletable) deleteOne(ctx, chat, id);
  return true;
}

/** sendChatAction */
export function sendChatAction(ctx: MethodContext): true {
  const action = ctx.params.text("action").trim().toLowerCase();
  if (!CHAT_ACTIONS.has(action)) throw badRequest("wrong parameter action in request");
  const chat = chatForBot(ctx.world, ctx.bot, ctx.params.get("chat_id"), "write");
  ctx.world.record(chat, {
    kind: "chat_action",
    actor: "bot",
    actorId: ctx.bot.id,
    method: ctx.method,
    action,
  });
  return true;
}

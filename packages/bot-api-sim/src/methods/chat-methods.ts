// The bot, its chats and its buttons: getMe, getChat, answerCallbackQuery and the command list
// (setMyCommands, getMyCommands, deleteMyCommands, default scope).

import type {
  BotCommand,
  Chat,
  ChatFullInfo,
  ChatPermissions,
  UserFromGetMe,
} from "@grammyjs/types";
import { badRequest } from "../wire/api-failure.js";
import type { MethodContext } from "./bot-messages.js";
import { chatForBot } from "./chat-access.js";

const ACCEPTED_GIFT_TYPES = Object.freeze({
  unlimited_gifts: false,
  limited_gifts: false,
  unique_gifts: false,
  premium_subscription: false,
  gifts_from_channels: false,
});

const GROUP_PERMISSIONS: ChatPermissions = Object.freeze({
  can_send_messages: true,
  can_send_audios: true,
  can_send_documents: true,
  can_send_photos: true,
  can_send_videos: true,
  can_send_video_notes: true,
  can_send_voice_notes: true,
  can_send_polls: true,
  can_send_other_messages: true,
  can_add_web_page_previews: true,
  can_change_info: true,
  can_invite_users: true,
  can_pin_messages: true,
  can_manage_topics: false,
});

/** getMe */
export function getMe(ctx: MethodContext): UserFromGetMe {
  return ctx.bot.user;
}

/** getChat */
export function getChat(ctx: MethodContext): ChatFullInfo {
  const chat = chatForBot(ctx.world, ctx.bot, ctx.params.get("chat_id"), "read");
  const common = {
    accent_color_id: 0,
    max_reaction_count: 11,
    accepted_gift_types: { ...ACCEPTED_GIFT_TYPES },
  };
  const base = chat.chat();
  if (base.type === "private") return { ...base, ...common };
  if (base.type === "group") return { ...base, ...common, permissions: { ...GROUP_PERMISSIONS } };
  return { ...(base as Chat.SupergroupChat), ...common, permissions: { ...GROUP_PERMISSIONS } };
}

/** answerCallbackQuery */
export function answerCallbackQuery(ctx: MethodContext): true {
  const id = ctx.params.text("callback_query_id").trim();
  const query = ctx.bot.callbackQuery(id);
  if (query === undefined || query.answer !== undefined) {
    throw badRequest("query is too old and response timeout expired or query ID is invalid");
  }
  const text = ctx.params.get("text");
  const url = ctx.params.get("url");
  query.answer = Object.freeze({
    text,
    showAlert: ctx.params.bool("show_alert"),
    url,
    cacheTime: ctx.params.int("cache_time", 0, 0, 30 * 24 * 60 * 60),
    atMs: ctx.world.now(),
  });
  for (const waiter of query.waiters.splice(0)) waiter(query.answer);
  ctx.world.events.emit({
    type: "callback_answer",
    chatKey: query.chatKey,
    callbackQueryId: id,
    answer: query.answer,
  });
  return true;
}

function scopeIsDefault(ctx: MethodContext): boolean {
  const scope = ctx.params.json("scope");
  const languageCode = ctx.params.get("language_code");
  if (languageCode !== undefined) return false;
  if (scope === undefined) return true;
  return !("error" in scope) && (scope.value as { type?: unknown } | null)?.type === "default";
}

/** setMyCommands (default scope and language; other scopes are accepted and not kept) */
export function setMyCommands(ctx: MethodContext): true {
  const parsed = ctx.params.json("commands");
  if (parsed === undefined) {
    if (scopeIsDefault(ctx)) ctx.bot.commands = [];
    return true;
  }
  if ("error" in parsed) throw badRequest("can't parse commands JSON object");
  if (!Array.isArray(parsed.value)) throw badRequest("expected an Array of BotCommand");
  if (parsed.value.length > 100) throw badRequest("too many commands specified");
  const commands: BotCommand[] = parsed.value.map((item: unknown) => {
    const { command, description } = (item ?? {}) as { command?: unknown; description?: unknown };
    if (typeof command !== "string" || typeof description !== "string") {
      throw badRequest("can't parse BotCommand: expected an Object with command and description");
    }
    const name = command.replace(/^\//, "");
    if (!/^[a-z0-9_]{1,32}$/.test(name)) throw badRequest("BOT_COMMAND_INVALID");
    if (description.length === 0 || description.length > 256) {
      throw badRequest("BOT_COMMAND_DESCRIPTION_INVALID");
    }
    return Object.freeze({ command: name, description });
  });
  if (scopeIsDefault(ctx)) ctx.bot.commands = Object.freeze(commands);
  return true;
}

/** getMyCommands */
export function getMyCommands(ctx: MethodContext): BotCommand[] {
  return scopeIsDefault(ctx) ? [...ctx.bot.commands] : [];
}

/** deleteMyCommands */
export function deleteMyCommands(ctx: MethodContext): true {
  if (scopeIsDefault(ctx)) ctx.bot.commands = [];
  return true;
}

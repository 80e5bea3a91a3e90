// How a bot's chat_id becomes a chat, with Telegram's answers when it cannot: empty id, unknown
// chat, a user who never opened the chat or blocked the bot, a group the bot left or was kicked
// from, and a group upgraded to a supergroup.

import { badRequest, forbidden } from "../wire/api-failure.js";
import { strictInteger } from "../wire/request-params.js";
import type { BotRecord } from "../world/bot-record.js";
import type { ChatRecord } from "../world/chat-record.js";
import type { SimWorld } from "../world/sim-world.js";

/** Reading a chat (getChat) or writing to it (send, edit, delete, chat action). */
type ChatAccess = "read" | "write";

/**
 * The chat a bot names with `chat_id`, or the Telegram error for it. Writes to a chat the bot
 * cannot write to fail here, before any rate limit is consulted.
 */
export function chatForBot(
  world: SimWorld,
  bot: BotRecord,
  chatIdText: string | undefined,
  access: ChatAccess,
): ChatRecord {
  const text = chatIdText?.trim() ?? "";
  if (text.length === 0) throw badRequest("chat_id is empty");
  const id = strictInteger(text);
  if (id === undefined || id === 0) throw badRequest("chat not found");
  if (id > 0) {
    const chat = bot.privateChats.get(id);
    if (chat !== undefined) {
      if (access === "write" && chat.blocked) throw forbidden("bot was blocked by the user");
      if (access === "write" && !chat.started) {
        throw forbidden("bot can't initiate conversation with a user");
      }
      return chat;
    }
    if (access === "write" && world.botById(id) !== undefined) {
      throw forbidden("bot can't send messages to bots");
    }
    if (access === "write" && world.userById(id) !== undefined) {
      throw forbidden("bot can't initiate conversation with a user");
    }
    throw badRequest("chat not found");
  }
  const chat = world.group(id);
  const status = chat?.bots.get(bot.id);
  if (chat === undefined || status === undefined) throw badRequest("chat not found");
  if (access === "write" && chat.migratedTo !== undefined) {
    throw badRequest("group chat was upgraded to a supergroup chat", {
      migrate_to_chat_id: chat.migratedTo,
    });
  }
  const where = chat.kind === "group" ? "group chat" : "supergroup chat";
  if (status === "kicked") throw forbidden(`bot was kicked from the ${where}`);
  if (status === "left") throw forbidden(`bot is not a member of the ${where}`);
  return chat;
}

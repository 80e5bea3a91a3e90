// Messages posted by simulated users and the updates they become: who receives what (privacy
// mode in groups), service messages, and chat member changes as ChatMemberUpdated updates.

import type {
  ChatMember,
  ChatMemberUpdated,
  Message,
  MessageEntity,
  Update,
  User,
} from "@grammyjs/types";
import { type BotRecord, botAsUser } from "../world/bot-record.js";
import {
  type ChatRecord,
  isPresent,
  type MemberStatus,
  type StoredMessage,
} from "../world/chat-record.js";
import { deepFreeze } from "../world/deep-freeze.js";
import type { SimWorld } from "../world/sim-world.js";
import type { UpdateType } from "../world/update-queue.js";

/** Bots present in a chat (the one bot of a private chat, unless it is blocked). */
export function presentBots(world: SimWorld, chat: ChatRecord): BotRecord[] {
  if (chat.kind === "private") {
    const bot = world.botById(chat.botId as number) as BotRecord;
    return chat.blocked ? [] : [bot];
  }
  const bots: BotRecord[] = [];
  for (const [id, status] of chat.bots) {
    const bot = world.botById(id);
    if (bot !== undefined && isPresent(status)) bots.push(bot);
  }
  return bots;
}

function entitiesOf(message: Message): readonly MessageEntity[] {
  return (
    (message as { entities?: MessageEntity[] }).entities ??
    (message as { caption_entities?: MessageEntity[] }).caption_entities ??
    []
  );
}

function textOrCaption(message: Message): string {
  return (message as { text?: string }).text ?? (message as { caption?: string }).caption ?? "";
}

/**
 * Whether a bot in privacy mode sees a user's message in a group: commands not addressed to
 * another bot, mentions of the bot, and replies to the bot's own messages.
 */
function isMeantFor(bot: BotRecord, message: Message, replyTo: StoredMessage | undefined): boolean {
  if (replyTo?.senderBotId === bot.id) return true;
  const text = textOrCaption(message);
  const username = bot.user.username.toLowerCase();
  for (const entity of entitiesOf(message)) {
    const value = text.slice(entity.offset, entity.offset + entity.length).toLowerCase();
    if (entity.type === "bot_command") {
      const at = value.indexOf("@");
      if (at < 0 || value.slice(at + 1) === username) return true;
    } else if (entity.type === "mention" && value === `@${username}`) {
      return true;
    }
  }
  return false;
}

/** The bots that receive a user's (non-service) message as an update. */
export function recipientsOf(
  world: SimWorld,
  chat: ChatRecord,
  message: Message,
  replyTo: StoredMessage | undefined,
): BotRecord[] {
  return presentBots(world, chat).filter((bot) => {
    if (chat.kind === "private") return true;
    return (
      bot.user.can_read_all_group_messages ||
      chat.bots.get(bot.id) === "administrator" ||
      isMeantFor(bot, message, replyTo)
    );
  });
}

/**
 * Stores a message from a user (or a service message), records it and queues it for `recipients`
 * — all or nothing: when a recipient's queue is full nothing changes.
 */
export function postUserMessage(
  world: SimWorld,
  chat: ChatRecord,
  from: User,
  content: Record<string, unknown>,
  recipients: (message: Message) => BotRecord[],
): Message {
  const message = deepFreeze({
    message_id: 0,
    from,
    chat: chat.chat(),
    date: world.unixNow(),
    ...content,
  }) as unknown as Message;
  const targets = recipients(message);
  world.ensureRoom(targets, "message");
  const final = deepFreeze({ ...message, message_id: chat.allocateMessageId() }) as Message;
  chat.store(
    {
      message: final,
      senderBotId: undefined,
      sentAtMs: world.now(),
      seenBy: new Set(targets.map((bot) => bot.id)),
    },
    world.options.maxMessagesPerChat,
  );
  const text = textOrCaption(final);
  world.record(chat, {
    kind: "send",
    actor: "user",
    actorId: from.id,
    messageId: final.message_id,
    ...(text.length > 0 ? { text } : {}),
    message: final,
  });
  world.deliver(targets, "message", () => final as NonNullable<Update["message"]>);
  return final;
}

/** A ChatMember object of a given status. */
function chatMember(user: User, status: MemberStatus): ChatMember {
  switch (status) {
    case "creator":
      return { user, status: "creator", is_anonymous: false };
    case "administrator":
      return {
        user,
        status: "administrator",
        can_be_edited: false,
        is_anonymous: false,
        can_manage_chat: true,
        can_delete_messages: true,
        can_manage_video_chats: true,
        can_restrict_members: true,
        can_promote_members: false,
        can_change_info: true,
        can_invite_users: true,
        can_post_stories: false,
        can_edit_stories: false,
        can_delete_stories: false,
        can_pin_messages: true,
        can_send_welcome_messages: false,
      };
    case "member":
      return { user, status: "member" };
    case "left":
      return { user, status: "left" };
    case "kicked":
      return { user, status: "kicked", until_date: 0 };
  }
}

/**
 * Queues a ChatMemberUpdated for `bots` (as `my_chat_member` when the member is the bot itself,
 * else `chat_member`, which Telegram sends only to administrators that asked for it).
 */
function memberUpdate(
  world: SimWorld,
  chat: ChatRecord,
  bots: readonly BotRecord[],
  type: Extract<UpdateType, "my_chat_member" | "chat_member">,
  by: User,
  member: User,
  from: MemberStatus,
  to: MemberStatus,
): void {
  const payload: ChatMemberUpdated = deepFreeze({
    chat: chat.chat(),
    from: by,
    date: world.unixNow(),
    old_chat_member: chatMember(member, from),
    new_chat_member: chatMember(member, to),
  });
  world.deliver(bots, type, () => payload);
}

/** my_chat_member for one bot about itself. */
export function botMemberUpdate(
  world: SimWorld,
  chat: ChatRecord,
  bot: BotRecord,
  by: User,
  from: MemberStatus,
  to: MemberStatus,
): void {
  memberUpdate(world, chat, [bot], "my_chat_member", by, botAsUser(bot), from, to);
}

/** chat_member for the administrator bots of a group about a user. */
export function userMemberUpdate(
  world: SimWorld,
  chat: ChatRecord,
  by: User,
  member: User,
  from: MemberStatus,
  to: MemberStatus,
): void {
  const admins = presentBots(world, chat).filter(
    (bot) => chat.bots.get(bot.id) === "administrator",
  );
  memberUpdate(world, chat, admins, "chat_member", by, member, from, to);
}

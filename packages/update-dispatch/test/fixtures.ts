// Builders of Telegram updates for tests: typed with @grammyjs/types, minimal but valid shapes.

import type { Chat, Message, Update, User } from "@grammyjs/types";

export const ANONYMOUS_ADMIN = 1087968824;
export const TELEGRAM_SERVICE_USER = 777000;
export const CHANNEL_BOT = 136817688;

export function user(id: number): User {
  return { id, is_bot: false, first_name: `user ${id}` };
}

export function privateChat(id: number): Chat.PrivateChat {
  return { id, type: "private", first_name: `user ${id}` };
}

export function groupChat(id: number): Chat.GroupChat {
  return { id, type: "group", title: `group ${id}` };
}

export function supergroupChat(id: number): Chat.SupergroupChat {
  return { id, type: "supergroup", title: `supergroup ${id}` };
}

export function channelChat(id: number): Chat.ChannelChat {
  return { id, type: "channel", title: `channel ${id}` };
}

type NonChannelMessage = NonNullable<Update["message"]>;

/** A message from `fromId` in `chat` (text carries the update id, to spot leaks in logs). */
export function messageIn(
  chat: Exclude<Chat, Chat.ChannelChat>,
  fromId: number,
  extra: Partial<Message> = {},
): NonChannelMessage {
  return {
    message_id: 1,
    date: 1_700_000_000,
    chat,
    from: user(fromId),
    text: "hello",
    ...extra,
  } as NonChannelMessage;
}

export function privateMessage(updateId: number, userId: number, text = "hello"): Update {
  return { update_id: updateId, message: messageIn(privateChat(userId), userId, { text }) };
}

export function groupMessage(
  updateId: number,
  chatId: number,
  userId: number,
  extra: Partial<Message> = {},
): Update {
  return { update_id: updateId, message: messageIn(supergroupChat(chatId), userId, extra) };
}

export function editedPrivateMessage(updateId: number, userId: number): Update {
  return {
    update_id: updateId,
    edited_message: { ...messageIn(privateChat(userId), userId), edit_date: 1_700_000_100 },
  };
}

/** An update the seed keys as `Other`: a stopped poll. */
export function pollUpdate(updateId: number): Update {
  return {
    update_id: updateId,
    poll: {
      id: `poll-${updateId}`,
      question: "?",
      options: [],
      total_voter_count: 0,
      is_closed: true,
      is_anonymous: true,
      type: "regular",
      allows_multiple_answers: false,
    } as unknown as NonNullable<Update["poll"]>,
  };
}

/** An update of a type this code does not know (a future Bot API version). */
export function futureUpdate(updateId: number): Update {
  return { update_id: updateId, hologram_call: { id: 5 } } as unknown as Update;
}

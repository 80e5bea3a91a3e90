// What the chat page is told about chats and changes, as JSON: a chat with its newest message and
// its place in the list, and each world event in the form the page's event stream sends. Never a
// token: chats, messages and users are what bots see, and bots are named by id and username.

import type { Chat, Message } from "@grammyjs/types";
import type { ChatRecord } from "../world/chat-record.js";
import type { MessageDraft } from "../world/message-draft.js";
import type { SimWorld } from "../world/sim-world.js";
import type { WorldEvent } from "../world/world-events.js";

/** A chat as the page's chat list shows it. */
export interface PageChat {
  /** Unique in the simulator (private chats of several bots share a chat id). */
  readonly key: string;
  /** The chat as bots see it (id, type, title or the user's name). */
  readonly chat: Chat;
  /** The bot of a private chat. */
  readonly botId: number | undefined;
  /** The newest message still kept, or null. */
  readonly newest: Message | null;
  /**
   * `seq` of the newest transcript event; before the first, the `seq` of the last event before
   * the chat was created plus 0.5, so a new chat comes right after what happened before it. The
   * list is ordered by it, newest first.
   */
  readonly activitySeq: number;
  /** A basic group upgraded to this supergroup. */
  readonly migratedTo: number | undefined;
  /** A private chat whose user blocked the bot. */
  readonly isBlocked: boolean;
}

/** Where a chat stands in the list: its newest event, or its creation. */
export function activitySeq(record: ChatRecord): number {
  return record.log.last?.seq ?? record.createdAfterSeq + 0.5;
}

/** The chat list entry of a chat. */
export function pageChat(record: ChatRecord): PageChat {
  return {
    key: record.key,
    chat: record.chat(),
    botId: record.botId,
    newest: record.newestMessage()?.message ?? null,
    activitySeq: activitySeq(record),
    migratedTo: record.migratedTo,
    isBlocked: record.blocked,
  };
}

/** The draft shown in a chat now, or null. */
export function shownDraft(world: SimWorld, record: ChatRecord): MessageDraft | null {
  return record.draft.current(world.now()) ?? null;
}

/** A world event as the event stream sends it: its SSE event name and JSON data. */
export function pageEvent(
  world: SimWorld,
  event: Exclude<WorldEvent, { type: "closed" }>,
): { readonly name: string; readonly data: unknown } {
  switch (event.type) {
    case "transcript":
      return {
        name: "transcript",
        data: {
          chat: pageChat(event.chat),
          event: event.event,
          // After the event: a send removes the draft, a Stop keeps it only with keep_on_stop.
          draft: shownDraft(world, event.chat),
          nowMs: world.now(),
        },
      };
    case "chat":
      return { name: "chat", data: { chat: pageChat(event.chat) } };
    case "user":
      return { name: "user", data: { user: event.user } };
    case "callback_answer":
      return {
        name: "callback_answer",
        data: {
          chatKey: event.chatKey,
          callbackQueryId: event.callbackQueryId,
          answer: event.answer,
        },
      };
    case "rate_limited":
      return {
        name: "rate_limited",
        data: {
          chatKey: event.chat.key,
          botId: event.botId,
          method: event.method,
          retryAfter: event.retryAfter,
          scope: event.scope,
        },
      };
    case "fault":
      return { name: "fault", data: { method: event.method, fault: event.fault } };
  }
}

// Which webhook delivery queue an update joins. Telegram's server sends the updates of one queue
// one at a time, in order, and different queues in parallel; it names a queue by the chat for
// messages and by the sender for queries, with a different queue per kind of update.

import type { Update } from "@grammyjs/types";

interface WithChat {
  readonly chat?: { readonly id: number };
}
interface WithSender {
  readonly from?: { readonly id: number };
  readonly user?: { readonly id: number };
}

function chatOf(payload: unknown): number | undefined {
  return (payload as WithChat).chat?.id;
}

function senderOf(payload: unknown): number | undefined {
  const value = payload as WithSender;
  return value.from?.id ?? value.user?.id;
}

/**
 * The delivery queue of `update`, as the real server keys it: messages, edits and channel posts
 * by their chat (one queue, so an edit never overtakes its message); callback, inline, shipping
 * and pre-checkout queries by their sender; member changes, reactions and boosts by chat or user,
 * each kind apart; a poll and its answers by the poll. An update with nothing to key on gets a queue of its own.
 */
export function webhookQueueKey(update: Update): string {
  const [type, payload] = Object.entries(update).find(([key]) => key !== "update_id") ?? [];
  if (type === undefined) return `u:${update.update_id}`;
  let id: number | undefined;
  switch (type) {
    case "message":
    case "edited_message":
    case "channel_post":
    case "edited_channel_post":
      return `chat:${chatOf(payload)}`;
    case "business_message":
    case "edited_business_message":
    case "deleted_business_messages":
    case "my_chat_member":
    case "chat_boost":
    case "removed_chat_boost":
    case "message_reaction":
    case "message_reaction_count":
    case "guest_message":
    case "stopped_message_generation":
      id = chatOf(payload);
      break;
    case "chat_member":
    case "chat_join_request":
      // The real server shares one queue between these two kinds, keyed by the user.
      return `member:${senderOf(payload) ?? update.update_id}`;
    case "shipping_query":
    case "pre_checkout_query":
      return `payment:${senderOf(payload) ?? update.update_id}`;
    case "poll":
    case "poll_answer": {
      // A poll and the answers to it share one queue.
      const poll = payload as { id?: string; poll_id?: string };
      return `poll:${poll.poll_id ?? poll.id ?? update.update_id}`;
    }
    default:
      id = senderOf(payload);
  }
  return id === undefined ? `u:${update.update_id}` : `${type}:${id}`;
}

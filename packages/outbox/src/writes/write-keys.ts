// The coalescing keys of Bot API writes: one scheme, so an op keyed by the client, a stream or the
// grammY transformer finds every other op of the same message, draft or query in the outbox.

import { MESSAGE_EDITS } from "./method-classes.js";

/**
 * What an edit or a delete names: a message id, `inline:<inline_message_id>` or
 * `ephemeral:<receiver_user_id>/<ephemeral_message_id>`.
 */
export type WriteTarget = number | string;

/**
 * The key builders every write of the outbox is planned with (`planWrite`). Keys are scoped
 * by chat in the outbox itself, so they carry no chat id. Build keys for
 * `TelegramOutbox.enqueue` or `TelegramClient.write` with these rather than by hand.
 *
 * @example
 * outbox.dropPending(chatId, writeKeys.edit(messageId)); // the pending editMessageText
 * const supersedes = writeKeys.editsOf(messageId); // what a delete of the message drops
 */
export const writeKeys = Object.freeze({
  /**
   * One pending edit per (message, method): `edit:<target>` for `editMessageText`,
   * `edit:<target>:<method>` for every other edit method (a caption or markup edit never
   * coalesces with a text edit of the same message).
   */
  edit(target: WriteTarget, method = "editMessageText"): string {
    return method === "editMessageText" ? `edit:${target}` : `edit:${target}:${method}`;
  },
  /** The keys of every message edit of `target`: what a delete or a replacing send drops. */
  editsOf(target: WriteTarget): string[] {
    return MESSAGE_EDITS.map((method) => writeKeys.edit(target, method));
  },
  /** A delete of one message. */
  delete(target: WriteTarget): string {
    return `delete:${target}`;
  },
  /** The final message that replaces the progress message `progressMessageId`. */
  replace(progressMessageId: number): string {
    return `replace:${progressMessageId}`;
  },
  /** One pending frame per draft (and method): the newest frame wins. */
  draft(draftId: WriteTarget, method = "sendMessageDraft"): string {
    return method === "sendMessageDraft" ? `draft:${draftId}` : `draft:${draftId}:${method}`;
  },
  /** The answer to one callback query. */
  callback(callbackQueryId: string): string {
    return `callback:${callbackQueryId}`;
  },
  /** The chat action of a chat, a topic (`message_thread_id`) or a business connection. */
  chatAction(threadId?: WriteTarget, businessConnectionId?: string): string {
    const business = businessConnectionId === undefined ? "" : `:business:${businessConnectionId}`;
    const thread = threadId === undefined ? "" : `:thread:${threadId}`;
    return `chat-action${business}${thread}`;
  },
});

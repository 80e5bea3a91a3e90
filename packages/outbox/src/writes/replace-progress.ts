// The replace-progress pair: the final message of a job that showed its progress in another
// message, sent at top priority in place of that message's pending edits, and the delete of the
// progress message, which follows only once the final was delivered.

import { type OutboxOperation, Priority } from "../operation.js";
import { writeKeys } from "./write-keys.js";
import { planWrite, writeOperation } from "./write-plan.js";

/**
 * `send` (the final message, into the progress message's chat) made to replace the progress
 * message `progressMessageId`: enqueuing it drops that message's pending edits, it goes out at
 * send priority (a second final for the same progress message coalesces with it), and once it was
 * delivered the delete that `deleteProgress` makes is enqueued as its follow-up (even while the
 * outbox drains). If the send fails, the progress message stays.
 *
 * @example
 * const final = replacingProgress(
 *   writeOperation(planWrite("sendMessage", { chat_id, text }), (signal) => api.send(…, signal)),
 *   progressId,
 *   (signal) => api.deleteMessage({ chat_id, message_id: progressId }, signal),
 * );
 * const outcome = await outbox.enqueue(final); // outcome.followUp: the delete's outcome
 */
export function replacingProgress<T>(
  send: OutboxOperation<T>,
  progressMessageId: number,
  deleteProgress: (signal: AbortSignal) => Promise<unknown>,
): OutboxOperation<T> {
  const remove = planWrite("deleteMessage", {
    chat_id: send.chatId,
    message_id: progressMessageId,
  });
  return {
    ...send,
    key: writeKeys.replace(progressMessageId),
    priority: Priority.send,
    supersedes: remove.supersedes,
    followUp: () => writeOperation(remove, deleteProgress),
  };
}

// Updates for queue tests: private messages from a few people, in update_id order, and messages
// in a group, where each member is a principal of their own within one chat.

import type { Update } from "@grammyjs/types";

/** A text message from `userId` in `chat`. */
function textUpdate(updateId: number, chat: object, userId: number, text: string): Update {
  return {
    update_id: updateId,
    message: {
      message_id: updateId,
      date: 1,
      chat,
      from: { id: userId, is_bot: false, first_name: "u" },
      text,
    },
  } as Update;
}

/** A private text message from `userId` (who is also the chat). */
export function message(updateId: number, userId: number, text = `m${updateId}`): Update {
  return textUpdate(updateId, { id: userId, type: "private", first_name: "u" }, userId, text);
}

/** A text message from `userId` in the group `chatId` (negative). */
export function groupMessage(updateId: number, chatId: number, userId: number): Update {
  return textUpdate(updateId, { id: chatId, type: "group", title: "g" }, userId, `g${updateId}`);
}

export function userOf(update: Update): number {
  return update.message?.from?.id ?? 0;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls an async check until it holds (the testing package's `eventually` is synchronous). */
export async function until(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(5);
  }
}

// Telegram updates for the dispatch and intake tests; each message text is a secret that must
// never reach a metric attribute.

import type { Update } from "@grammyjs/types";

/** Text every test message carries; no metric attribute may contain it. */
export const SECRET_TEXT = "the user's private words";

/** A text message from `userId` in `chatId` (a private chat when they are equal). */
export function message(updateId: number, userId: number, chatId = userId): Update {
  const chat =
    chatId === userId
      ? { id: chatId, type: "private" as const, first_name: "Ada" }
      : { id: chatId, type: "supergroup" as const, title: "Secret club" };
  return {
    update_id: updateId,
    message: {
      message_id: updateId,
      date: 1_700_000_000,
      chat,
      from: { id: userId, is_bot: false, first_name: "Ada" },
      text: `${SECRET_TEXT} #${updateId}`,
    },
  };
}

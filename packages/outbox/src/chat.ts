// Chat identity for pacing: one lane per chat, whether its id arrives as a number or a string.

/** A Bot API `chat_id`: a numeric id or an `@username`. */
export type ChatId = number | string;

const NUMERIC = /^-?\d+$/;

/**
 * The key a chat is paced under. Numeric strings and numbers name the same chat ("-100123" and
 * -100123); an `@username` is its own key because only Telegram can resolve it to an id.
 */
export function chatKeyOf(chatId: ChatId): string {
  if (typeof chatId === "number") {
    if (!Number.isSafeInteger(chatId)) {
      throw new RangeError(`Expected \`chatId\` to be an integer or a string, got ${chatId}`);
    }
    return String(chatId);
  }
  if (typeof chatId !== "string" || chatId.length === 0) {
    throw new TypeError(
      `Expected \`chatId\` to be an integer or a non-empty string, got ${JSON.stringify(chatId)}`,
    );
  }
  return NUMERIC.test(chatId) ? String(Number(chatId)) : chatId;
}

/**
 * Whether a chat is paced as a group: negative ids (groups, supergroups, channels) and
 * `@usernames`, which only public supergroups and channels have among chats a bot can write to.
 */
export function isGroupChat(chatKey: string): boolean {
  return chatKey.startsWith("@") || chatKey.startsWith("-");
}

// The newest message seen in each chat where a stream is open. A stream finishes in its progress
// message only while that message is still the newest: below later messages, a final edited in
// place would sit out of sight, so it is sent as a new message instead.

/** Per chat with an open stream: how many are open, and the highest message id seen there. */
export class LatestMessages {
  readonly #chats = new Map<string, { streams: number; latest: number }>();

  /** A stream opened in the chat: from now on its messages are noted. */
  opened(chatKey: string): void {
    const chat = this.#chats.get(chatKey);
    if (chat === undefined) this.#chats.set(chatKey, { streams: 1, latest: 0 });
    else chat.streams++;
  }

  /** A stream of the chat ended; with the last one the chat is forgotten. */
  closed(chatKey: string): void {
    const chat = this.#chats.get(chatKey);
    if (chat === undefined) return;
    if (--chat.streams === 0) this.#chats.delete(chatKey);
  }

  /** A message with this id is in the chat (ignored where no stream is open). */
  note(chatKey: string, messageId: number): void {
    const chat = this.#chats.get(chatKey);
    if (chat !== undefined && Number.isSafeInteger(messageId)) {
      chat.latest = Math.max(chat.latest, messageId);
    }
  }

  /** Whether no message newer than `messageId` is known in the chat. */
  isNewest(chatKey: string, messageId: number): boolean {
    return (this.#chats.get(chatKey)?.latest ?? 0) <= messageId;
  }
}

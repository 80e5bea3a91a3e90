// Every reply the bot makes goes through here: the outbox paces it, and the two outcomes a handler
// should not have to think about are handled once — a group that became a supergroup (follow
// `migrate_to_chat_id`) and a chat that no longer accepts the bot (blocked, kicked).

import type { InlineKeyboardMarkup, Message } from "@grammyjs/types";
import {
  ChatMigratedError,
  ForbiddenError,
  type InputFile,
  Priority,
  type TelegramClient,
  type WriteOutcome,
  writeKeys,
} from "@telepace/client";
import type { Logger } from "pino";
import type { BotEventSink, ProgressEditOutcome } from "./bot-events.js";

/** Extra fields of a text reply. */
export interface ReplyExtras {
  readonly replyMarkup?: InlineKeyboardMarkup | undefined;
  readonly replyToMessageId?: number | undefined;
  /** Replace this progress message: sent first, the old one deleted once it was delivered. */
  readonly replaceMessageId?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** What the bot has delivered, for its logs and the demo report. */
export interface MessengerCounters {
  sent: number;
  edits: number;
  documents: number;
  failed: number;
  unreachable: number;
  migrations: number;
}

/** Writes replies through the client's outbox, following migrations and noting unreachable chats. */
export class Messenger {
  readonly #client: TelegramClient;
  readonly #logger: Logger;
  readonly #onEvent: BotEventSink;
  // Group id → supergroup id, learned from migrate messages and from ChatMigratedError.
  readonly #migrated = new Map<number, number>();
  readonly #unreachable = new Set<number>();
  readonly counters: MessengerCounters = {
    sent: 0,
    edits: 0,
    documents: 0,
    failed: 0,
    unreachable: 0,
    migrations: 0,
  };

  constructor(client: TelegramClient, logger: Logger, onEvent: BotEventSink = () => {}) {
    this.#client = client;
    this.#logger = logger;
    this.#onEvent = onEvent;
  }

  /** The chat id to write to now: a migrated group's supergroup id, else `chatId`. */
  resolve(chatId: number): number {
    let id = chatId;
    for (let hops = 0; hops < 4; hops++) {
      const next = this.#migrated.get(id);
      if (next === undefined) break;
      id = next;
    }
    return id;
  }

  /** Remembers that a group became a supergroup. */
  recordMigration(fromChatId: number, toChatId: number): void {
    if (fromChatId === toChatId || this.#migrated.get(fromChatId) === toChatId) return;
    this.#migrated.set(fromChatId, toChatId);
    this.counters.migrations++;
    this.#logger.info({ fromChatId, toChatId }, "group migrated to a supergroup");
  }

  /** Marks a chat the bot can no longer write to (blocked by the user, removed from the group). */
  markUnreachable(chatId: number): void {
    if (this.#unreachable.has(chatId)) return;
    this.#unreachable.add(chatId);
    this.counters.unreachable++;
    this.#logger.info({ chatId }, "chat no longer reachable; replies to it are skipped");
    this.#onEvent({ type: "chat-reachability", chatId, isReachable: false });
  }

  /** Marks a chat reachable again (the user unblocked the bot, the bot was added back). */
  markReachable(chatId: number): void {
    if (this.#unreachable.delete(chatId))
      this.#onEvent({ type: "chat-reachability", chatId, isReachable: true });
  }

  isReachable(chatId: number): boolean {
    return !this.#unreachable.has(this.resolve(chatId));
  }

  /** Sends a text message; returns the message when delivered. */
  async sendText(
    chatId: number,
    text: string,
    extras: ReplyExtras = {},
  ): Promise<Message.TextMessage | undefined> {
    // The replaced progress message lives in the chat written to now. After a hop to the
    // supergroup its id names some other message there, which must not be deleted.
    const replaceIn = this.resolve(chatId);
    return this.#deliver(chatId, "sent", (target) =>
      this.#client.sendMessage(
        target,
        text,
        {
          ...(extras.replyMarkup ? { reply_markup: extras.replyMarkup } : {}),
          ...(extras.replyToMessageId !== undefined
            ? {
                reply_parameters: {
                  message_id: extras.replyToMessageId,
                  allow_sending_without_reply: true,
                },
              }
            : {}),
        },
        {
          ...(extras.replaceMessageId !== undefined && target === replaceIn
            ? { replaceMessageId: extras.replaceMessageId }
            : {}),
          signal: extras.signal,
        },
      ),
    );
  }

  /**
   * Edits a message's text. Pending edits of one message coalesce in the outbox, so a caller may
   * fire these as often as it likes; only the latest text is sent. Resolves with what became of
   * this edit.
   */
  async editText(
    chatId: number,
    messageId: number,
    text: string,
    replyMarkup?: InlineKeyboardMarkup,
  ): Promise<ProgressEditOutcome> {
    if (!this.isReachable(chatId)) return "skipped";
    const target = this.resolve(chatId);
    const outcome = await this.#client.editMessageText(
      target,
      messageId,
      text,
      replyMarkup ? { reply_markup: replyMarkup } : {},
    );
    if (outcome.status === "delivered") this.counters.edits++;
    else if (outcome.status === "failed" && outcome.error instanceof ChatMigratedError) {
      // The message stays behind in the old group; the caller sees resolve() change.
      this.recordMigration(target, outcome.error.migrateToChatId);
    } else if (outcome.status === "failed") this.#noteFailure(chatId, "edit", outcome.error);
    switch (outcome.status) {
      case "delivered":
        return outcome.notModified ? "unchanged" : "sent";
      case "superseded":
        return outcome.reason;
      default:
        return outcome.status;
    }
  }

  /**
   * Deletes a progress message once its final message is out, dropping its pending edits. Not
   * paced by the chat: Telegram's flood limits count messages sent and edited (the sim's do
   * too), not deletions, and in a busy group a paced delete took one of its 20 places a minute
   * from the replies waiting for them.
   */
  async deleteProgress(chatId: number, messageId: number): Promise<void> {
    if (!this.isReachable(chatId)) return;
    const target = this.resolve(chatId);
    const outcome = await this.#client.write(
      "deleteMessage",
      { chat_id: target, message_id: messageId },
      {
        key: writeKeys.delete(messageId),
        priority: Priority.delete,
        idempotent: true,
        paced: false,
        supersedes: writeKeys.editsOf(messageId),
      },
    );
    if (outcome.status === "failed") this.#noteFailure(chatId, "deleteMessage", outcome.error);
  }

  /** Sends a document; returns the message when delivered. */
  async sendDocument(
    chatId: number,
    file: InputFile,
    caption: string,
    extras: ReplyExtras = {},
  ): Promise<Message.DocumentMessage | undefined> {
    return this.#deliver(chatId, "documents", (target) =>
      this.#client.sendDocument(
        target,
        file,
        {
          caption,
          ...(extras.replyToMessageId !== undefined
            ? {
                reply_parameters: {
                  message_id: extras.replyToMessageId,
                  allow_sending_without_reply: true,
                },
              }
            : {}),
        },
        { signal: extras.signal },
      ),
    );
  }

  /** Answers a callback query (chat-less: only the global budget applies). */
  async answerCallback(queryId: string, text: string): Promise<void> {
    const outcome = await this.#client.answerCallbackQuery(queryId, { text });
    if (outcome.status === "failed")
      this.#noteFailure(undefined, "answerCallbackQuery", outcome.error);
  }

  async #deliver<T>(
    chatId: number,
    counter: "sent" | "documents",
    write: (target: number) => Promise<WriteOutcome<T>>,
  ): Promise<T | undefined> {
    // A migration can be learned from the failed write itself; follow it once per hop.
    for (let hop = 0; hop < 3; hop++) {
      if (!this.isReachable(chatId)) return undefined;
      const target = this.resolve(chatId);
      const outcome = await write(target);
      if (outcome.status === "delivered") {
        this.counters[counter]++;
        return outcome.result;
      }
      if (outcome.status === "failed" && outcome.error instanceof ChatMigratedError) {
        this.recordMigration(target, outcome.error.migrateToChatId);
        continue;
      }
      if (outcome.status === "failed") this.#noteFailure(chatId, counter, outcome.error);
      else if (outcome.status !== "superseded") {
        this.counters.failed++;
        this.#logger.warn({ chatId, status: outcome.status }, "reply not delivered");
      }
      return undefined;
    }
    return undefined;
  }

  #noteFailure(chatId: number | undefined, what: string, error: unknown): void {
    if (chatId !== undefined && error instanceof ForbiddenError) {
      this.markUnreachable(this.resolve(chatId));
      return;
    }
    this.counters.failed++;
    const code = (error as { code?: unknown }).code;
    const description = (error as { description?: unknown }).description;
    this.#logger.warn({ chatId, what, code, description }, "write failed");
  }
}

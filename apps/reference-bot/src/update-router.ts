// The bot's handlers: one Update in, replies out through the Messenger. The dispatcher calls
// `handle` in per-person order; anything slow either holds that person's key on purpose (a
// download they are waiting for) or runs detached (a /work job) so Cancel can reach it.

import type { CallbackQuery, Message, Update, UserFromGetMe } from "@grammyjs/types";
import { InputFile, TelegramApiError, type TelegramClient } from "@telepace/client";
import type { MediaSchedulerRegistry } from "@telepace/media-scheduler";
import type { Logger } from "pino";
import type { AdminBroadcasts } from "./admin-broadcasts.js";
import type { AskAnswers } from "./ask-answers.js";
import { HELP_TEXT, parseCommand } from "./commands.js";
import type { KnownUsers } from "./known-users.js";
import { downloadDigest, generatedDigest, meteredUpload } from "./media-io.js";
import type { Messenger } from "./messenger.js";
import { WorkJobs } from "./work-jobs.js";

/** The update types the bot asks for. */
export const ALLOWED_UPDATES = [
  "message",
  "edited_message",
  "callback_query",
  "my_chat_member",
  "stopped_message_generation",
] as const;

/** Largest generated file /file sends, in KiB (the Bot API's upload limit is 50 MB). */
export const MAX_FILE_KIB = 20_480;
/** Longest /work job, in seconds. */
export const MAX_WORK_SECONDS = 120;
const DEFAULT_WORK_SECONDS = 5;

/** What the router needs from the bot. */
export interface UpdateRouterParts {
  readonly me: UserFromGetMe;
  readonly client: TelegramClient;
  readonly messenger: Messenger;
  readonly jobs: WorkJobs;
  readonly answers: AskAnswers;
  readonly broadcasts: AdminBroadcasts;
  /** Everyone who writes in a private chat is a /broadcast recipient. */
  readonly knownUsers: KnownUsers;
  readonly registry: MediaSchedulerRegistry;
  /** The media scheduler's "data centre" for this Bot API: its host. */
  readonly mediaDc: string;
  readonly logger: Logger;
}

/** Counters for logs and the demo report. */
export interface RouterCounters {
  updates: number;
  echoes: number;
  documents: number;
  documentBytes: number;
  filesSent: number;
  fileBytes: number;
  ignored: number;
}

/** Routes each update to its handler. */
export class UpdateRouter {
  readonly #parts: UpdateRouterParts;
  readonly counters: RouterCounters = {
    updates: 0,
    echoes: 0,
    documents: 0,
    documentBytes: 0,
    filesSent: 0,
    fileBytes: 0,
    ignored: 0,
  };

  constructor(parts: UpdateRouterParts) {
    this.#parts = parts;
  }

  /** The dispatcher's processor. */
  async handle(update: Update, signal: AbortSignal): Promise<void> {
    this.counters.updates++;
    if (update.message !== undefined) return this.#onMessage(update.message, signal);
    if (update.callback_query !== undefined) return this.#onCallback(update.callback_query);
    if (this.#parts.answers.handleUpdate(update)) return;
    if (update.my_chat_member !== undefined) {
      const { chat, new_chat_member: member } = update.my_chat_member;
      if (member.status === "kicked" || member.status === "left")
        this.#parts.messenger.markUnreachable(chat.id);
      else this.#parts.messenger.markReachable(chat.id);
      return;
    }
    this.counters.ignored++;
  }

  async #onMessage(message: Message, signal: AbortSignal): Promise<void> {
    const { messenger } = this.#parts;
    if (message.migrate_to_chat_id !== undefined) {
      messenger.recordMigration(message.chat.id, message.migrate_to_chat_id);
      return;
    }
    if (message.migrate_from_chat_id !== undefined) {
      messenger.recordMigration(message.migrate_from_chat_id, message.chat.id);
      return;
    }
    if (message.document !== undefined) return this.#onDocument(message, signal);
    const text = message.text;
    if (text === undefined || message.from === undefined) {
      this.counters.ignored++;
      return;
    }
    if (message.chat.type === "private") this.#parts.knownUsers.add(message.from.id);
    const command = parseCommand(text, this.#parts.me.username);
    if (command === undefined) return this.#echo(message, text);
    switch (command.name) {
      case "start":
      case "help":
        await messenger.sendText(message.chat.id, HELP_TEXT, {
          replyToMessageId: message.message_id,
        });
        return;
      case "work":
        return this.#onWork(message, command.args);
      case "broadcast":
        return this.#parts.broadcasts.handle(message, command.args);
      case "file":
        return this.#onFile(message, command.args, signal);
      case "ask":
        if (command.args === "") {
          await messenger.sendText(message.chat.id, "Usage: /ask <question>", {
            replyToMessageId: message.message_id,
          });
          return;
        }
        // Awaited: the update stays unfinished in the journal until the answer is out.
        await this.#parts.answers.start(
          message.chat.id,
          message.chat.type === "private",
          command.args,
          message.message_id,
        );
        return;
      default:
        await messenger.sendText(
          message.chat.id,
          `Unknown command /${command.name}. Send /help for the list.`,
          {
            replyToMessageId: message.message_id,
          },
        );
    }
  }

  async #echo(message: Message, text: string): Promise<void> {
    const isPrivate = message.chat.type === "private";
    const me = this.#parts.me;
    const addressed =
      isPrivate ||
      text.toLowerCase().includes(`@${me.username.toLowerCase()}`) ||
      message.reply_to_message?.from?.id === me.id;
    if (!addressed) {
      this.counters.ignored++;
      return;
    }
    this.counters.echoes++;
    await this.#parts.messenger.sendText(
      message.chat.id,
      truncateUtf16(`You said: ${text}`, 4096),
      {
        replyToMessageId: message.message_id,
      },
    );
  }

  async #onWork(message: Message, args: string): Promise<void> {
    const seconds = args === "" ? DEFAULT_WORK_SECONDS : Number(args);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_WORK_SECONDS) {
      await this.#parts.messenger.sendText(
        message.chat.id,
        `Usage: /work [seconds], with 1 to ${MAX_WORK_SECONDS} seconds.`,
        { replyToMessageId: message.message_id },
      );
      return;
    }
    const from = message.from;
    if (from === undefined) return;
    await this.#parts.jobs.start(message.chat.id, from, seconds, message.message_id);
  }

  async #onCallback(query: CallbackQuery): Promise<void> {
    const jobId = WorkJobs.parseCancel(query.data);
    const answer =
      jobId === undefined
        ? "This button does nothing any more."
        : await this.#parts.jobs.cancel(jobId, query.from.id);
    await this.#parts.messenger.answerCallback(query.id, answer);
  }

  async #onDocument(message: Message, signal: AbortSignal): Promise<void> {
    const { client, registry, mediaDc, messenger } = this.#parts;
    const document = message.document;
    if (document === undefined) return;
    const name = document.file_name ?? "your file";
    let text: string;
    try {
      const file = await client.getFile(document.file_id, { signal });
      const digest = await downloadDigest(client, registry, mediaDc, file, signal);
      this.counters.documents++;
      this.counters.documentBytes += digest.sizeBytes;
      text = `${name}: ${digest.sizeBytes} bytes, SHA-256 ${digest.sha256}`;
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof TelegramApiError && /too big/i.test(error.description)) {
        text = `${name} is larger than the 20 MB the Bot API lets bots download.`;
      } else {
        this.#parts.logger.warn(
          { code: (error as { code?: unknown }).code, messageId: message.message_id },
          "download failed",
        );
        text = `I could not download ${name}; please try again.`;
      }
    }
    await messenger.sendText(message.chat.id, text, { replyToMessageId: message.message_id });
  }

  async #onFile(message: Message, args: string, signal: AbortSignal): Promise<void> {
    const { messenger, registry, mediaDc } = this.#parts;
    const kib = Number(args);
    if (!Number.isInteger(kib) || kib < 1 || kib > MAX_FILE_KIB) {
      await messenger.sendText(
        message.chat.id,
        `Usage: /file <KiB>, with 1 to ${MAX_FILE_KIB} KiB.`,
        {
          replyToMessageId: message.message_id,
        },
      );
      return;
    }
    const sizeBytes = kib * 1024;
    const file = new InputFile(
      () => meteredUpload(registry, mediaDc, sizeBytes, signal),
      `generated-${kib}KiB.bin`,
    );
    const sent = await messenger.sendDocument(
      message.chat.id,
      file,
      `${kib} KiB, SHA-256 ${generatedDigest(sizeBytes)}`,
      { replyToMessageId: message.message_id, signal },
    );
    if (sent !== undefined) {
      this.counters.filesSent++;
      this.counters.fileBytes += sizeBytes;
    }
  }
}

/** Cuts `text` to at most `limit` UTF-16 units without splitting a surrogate pair. */
export function truncateUtf16(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const code = text.charCodeAt(limit - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
  return text.slice(0, end);
}

// What simulated users do in chats through the control API: send text, commands, documents and
// photos, edit their messages and press inline buttons. Each becomes the update Telegram would
// send, subject to privacy mode in groups.

import type { CallbackQuery, Message, MessageEntity, Update, User } from "@grammyjs/types";
import { checkOptions } from "@telepace/core";
import { BotApiSimError } from "../errors.js";
import {
  characterLength,
  formatText,
  MAX_CAPTION_LENGTH,
  MAX_TEXT_LENGTH,
} from "../text/formatted-text.js";
import { hasCallbackButton } from "../text/reply-markup.js";
import { ApiFailure } from "../wire/api-failure.js";
import type { BotRecord } from "../world/bot-record.js";
import { type ChatRecord, isPresent, type StoredMessage, shallow } from "../world/chat-record.js";
import { deepFreeze } from "../world/deep-freeze.js";
import { guessMimeType, StorageFullError, type StoredFile } from "../world/file-store.js";
import { imageInfo } from "../world/image-size.js";
import type { ChatRef, SimWorld, UserRef } from "../world/sim-world.js";
import type { BotOption } from "./sim-users.js";
import { botMemberUpdate, postUserMessage, presentBots, recipientsOf } from "./user-messages.js";

/** The keys of {@link SendTextOptions}. */
const TEXT_KEYS: readonly (keyof SendTextOptions)[] = ["bot", "replyTo", "entities"];
/** The keys of {@link SendMediaOptions}. */
const MEDIA_KEYS: readonly (keyof SendMediaOptions)[] = ["bot", "caption", "replyTo"];

/** Options of {@link BotApiSim.sendText}. */
export interface SendTextOptions extends BotOption {
  /** Reply to this message of the same chat. */
  readonly replyTo?: number;
  /** Formatting entities the user's client attached (commands, mentions and links are detected anyway). */
  readonly entities?: readonly MessageEntity[];
}

/** Options of {@link BotApiSim.sendDocument} and {@link BotApiSim.sendPhoto}. */
export interface SendMediaOptions extends BotOption {
  /** Up to 1024 characters. */
  readonly caption?: string;
  /** Reply to this message of the same chat. */
  readonly replyTo?: number;
}

/** A file a simulated user sends. */
export interface UserFile {
  readonly bytes: Uint8Array;
  /** @defaultValue none */
  readonly fileName?: string;
  /** @defaultValue guessed from the file name */
  readonly mimeType?: string;
}

/** The user-side actions of the control API. */
export class UserActions {
  readonly #world: SimWorld;
  #callbackSequence = 0;

  constructor(world: SimWorld) {
    this.#world = world;
  }

  /** A user sends text; "/cmd" at the start makes it a command (a bot_command entity). */
  sendText(user: UserRef, chat: ChatRef, text: string, options: SendTextOptions = {}): Message {
    checkOptions("options", options, TEXT_KEYS);
    const { sender, record } = this.#prepare(user, chat, options);
    if (typeof text !== "string")
      throw new TypeError(`Expected \`text\` to be a string, got ${String(text)}`);
    const formatted = this.#format(text, options.entities, "text");
    if (formatted.text.length === 0)
      throw new RangeError("Expected `text` to be non-empty after trimming");
    if (characterLength(formatted.text) > MAX_TEXT_LENGTH) {
      throw new RangeError(`Expected \`text\` to have at most ${MAX_TEXT_LENGTH} characters`);
    }
    const content: Record<string, unknown> = { text: formatted.text };
    if (formatted.entities.length > 0) content.entities = formatted.entities;
    return this.#post(sender, record, content, options.replyTo);
  }

  /** A user sends `/command args` (addressed to no particular bot). */
  sendCommand(
    user: UserRef,
    chat: ChatRef,
    command: string,
    args?: string,
    options: SendTextOptions = {},
  ): Message {
    checkOptions("options", options, TEXT_KEYS);
    const name = typeof command === "string" ? command.replace(/^\//, "") : command;
    if (typeof name !== "string" || !/^[A-Za-z0-9_]{1,32}(@[A-Za-z0-9_]{3,32})?$/.test(name)) {
      throw new RangeError(
        `Expected \`command\` to be 1–32 characters of [A-Za-z0-9_] (optionally @bot), got ${JSON.stringify(command)}`,
      );
    }
    const text = args === undefined || args.length === 0 ? `/${name}` : `/${name} ${args}`;
    return this.sendText(user, chat, text, options);
  }

  /** A user sends a document; its bytes are stored and reachable through getFile. */
  sendDocument(
    user: UserRef,
    chat: ChatRef,
    file: UserFile,
    options: SendMediaOptions = {},
  ): Message {
    checkOptions("options", options, MEDIA_KEYS);
    const { sender, record } = this.#prepare(user, chat, options);
    const bytes = this.#bytes(file);
    const caption = this.#caption(options.caption);
    const stored = this.#store("document", bytes, {
      fileName: file.fileName,
      mimeType: guessMimeType(file.fileName, file.mimeType),
    });
    const document: Record<string, unknown> = {
      file_id: stored.fileId,
      file_unique_id: stored.fileUniqueId,
    };
    if (stored.fileName !== undefined) document.file_name = stored.fileName;
    if (stored.mimeType !== undefined) document.mime_type = stored.mimeType;
    document.file_size = stored.bytes.length;
    return this.#post(sender, record, { document, ...caption }, options.replyTo);
  }

  /** A user sends a photo (PNG, JPEG, GIF or WebP). */
  sendPhoto(user: UserRef, chat: ChatRef, file: UserFile, options: SendMediaOptions = {}): Message {
    checkOptions("options", options, MEDIA_KEYS);
    const { sender, record } = this.#prepare(user, chat, options);
    const bytes = this.#bytes(file);
    const info = imageInfo(bytes);
    if (info === undefined)
      throw new RangeError("Expected `bytes` to be a PNG, JPEG, GIF or WebP image");
    const caption = this.#caption(options.caption);
    const stored = this.#store("photo", bytes, {
      width: info.width,
      height: info.height,
      extension: info.extension,
    });
    const photo = [
      {
        file_id: stored.fileId,
        file_unique_id: stored.fileUniqueId,
        width: info.width,
        height: info.height,
        file_size: stored.bytes.length,
      },
    ];
    return this.#post(sender, record, { photo, ...caption }, options.replyTo);
  }

  /** A user edits one of their text messages; bots that saw it get `edited_message`. */
  editText(
    user: UserRef,
    chat: ChatRef,
    messageId: number,
    text: string,
    options: SendTextOptions = {},
  ): Message {
    checkOptions("options", options, TEXT_KEYS);
    const world = this.#world;
    const { sender, record } = this.#prepare(user, chat, options);
    const stored = this.#message(record, messageId);
    if (stored.senderBotId !== undefined || stored.message.from?.id !== sender.id) {
      throw new BotApiSimError(
        "ERR_INVALID_STATE",
        `Message ${messageId} was not sent by user ${sender.id}`,
      );
    }
    if ((stored.message as { text?: string }).text === undefined) {
      throw new BotApiSimError("ERR_INVALID_STATE", `Message ${messageId} has no text to edit`);
    }
    const formatted = this.#format(text, options.entities, "text");
    if (formatted.text.length === 0 || characterLength(formatted.text) > MAX_TEXT_LENGTH) {
      throw new RangeError(
        `Expected \`text\` to have 1–${MAX_TEXT_LENGTH} characters after trimming`,
      );
    }
    const { entities: _old, ...rest } = stored.message as Message & { entities?: unknown };
    const edited = deepFreeze({
      ...rest,
      text: formatted.text,
      ...(formatted.entities.length > 0 ? { entities: formatted.entities } : {}),
      edit_date: world.unixNow(),
    }) as unknown as Message;
    const replyTo = (edited as { reply_to_message?: Message }).reply_to_message;
    const replied = replyTo === undefined ? undefined : record.messages.get(replyTo.message_id);
    const targets = presentBots(world, record).filter(
      (bot) =>
        stored.seenBy.has(bot.id) || recipientsOf(world, record, edited, replied).includes(bot),
    );
    world.deliver(targets, "edited_message", () => edited as NonNullable<Update["edited_message"]>);
    for (const bot of targets) stored.seenBy.add(bot.id);
    stored.message = edited;
    world.record(record, {
      kind: "edit",
      actor: "user",
      actorId: sender.id,
      messageId,
      text: formatted.text,
      message: edited,
    });
    return edited;
  }

  /**
   * A user presses an inline button of a bot's message; the bot gets a `callback_query`. The
   * message must carry a button with exactly this `callback_data`.
   */
  pressButton(
    user: UserRef,
    chat: ChatRef,
    messageId: number,
    data: string,
    options: BotOption = {},
  ): CallbackQuery {
    checkOptions("options", options, ["bot"]);
    const world = this.#world;
    const { sender, record } = this.#prepare(user, chat, options);
    const stored = this.#message(record, messageId);
    const bot = stored.senderBotId === undefined ? undefined : world.botById(stored.senderBotId);
    if (bot === undefined || !hasCallbackButton(stored.message.reply_markup, data)) {
      throw new BotApiSimError(
        "ERR_NO_SUCH_BUTTON",
        `Message ${messageId} has no inline button with callback_data ${JSON.stringify(data)}`,
      );
    }
    if (!presentBots(world, record).includes(bot)) {
      throw new BotApiSimError(
        "ERR_INVALID_STATE",
        `Bot ${bot.id} is no longer in chat ${record.id}`,
      );
    }
    const id = `${bot.id}${String(++this.#callbackSequence).padStart(9, "0")}`;
    const query: CallbackQuery = deepFreeze({
      id,
      from: sender,
      message: stored.message,
      chat_instance: record.chatInstance,
      data,
    });
    world.deliver([bot], "callback_query", () => query);
    bot.addCallbackQuery(id, record.key);
    return query;
  }

  #prepare(user: UserRef, chat: ChatRef, options: BotOption): { sender: User; record: ChatRecord } {
    const world = this.#world;
    world.assertOpen();
    const sender = world.user(user);
    const record = world.resolveChat(chat, options.bot);
    if (record.kind === "private") {
      if (record.user?.id !== sender.id) {
        throw new BotApiSimError(
          "ERR_NOT_A_MEMBER",
          `Chat ${record.id} is another user's private chat`,
        );
      }
    } else {
      if (record.migratedTo !== undefined) {
        throw new BotApiSimError(
          "ERR_INVALID_STATE",
          `Group ${record.id} was upgraded to supergroup ${record.migratedTo}; use that chat`,
        );
      }
      if (!isPresent(record.members.get(sender.id))) {
        throw new BotApiSimError(
          "ERR_NOT_A_MEMBER",
          `User ${sender.id} is not in chat ${record.id}`,
        );
      }
    }
    return { sender, record };
  }

  #format(text: string, entities: readonly MessageEntity[] | undefined, field: string) {
    if (typeof text !== "string")
      throw new TypeError(`Expected \`${field}\` to be a string, got ${String(text)}`);
    try {
      return formatText({
        text,
        parseMode: undefined,
        entities: entities === undefined ? undefined : JSON.stringify(entities),
      });
    } catch (error) {
      if (error instanceof ApiFailure)
        throw new RangeError(`Invalid \`entities\`: ${error.description}`);
      throw error;
    }
  }

  #caption(caption: string | undefined): Record<string, unknown> {
    if (caption === undefined) return {};
    const formatted = this.#format(caption, undefined, "caption");
    if (characterLength(formatted.text) > MAX_CAPTION_LENGTH) {
      throw new RangeError(`Expected \`caption\` to have at most ${MAX_CAPTION_LENGTH} characters`);
    }
    if (formatted.text.length === 0) return {};
    return formatted.entities.length > 0
      ? { caption: formatted.text, caption_entities: formatted.entities }
      : { caption: formatted.text };
  }

  #bytes(file: UserFile): Buffer {
    const bytes = file?.bytes;
    if (!(bytes instanceof Uint8Array)) {
      throw new TypeError(`Expected \`bytes\` to be a Uint8Array, got ${String(bytes)}`);
    }
    if (bytes.length === 0) throw new RangeError("Expected `bytes` to be non-empty");
    return Buffer.from(bytes);
  }

  #store(
    kind: "document" | "photo",
    bytes: Buffer,
    meta: Parameters<SimWorld["files"]["add"]>[2],
  ): StoredFile {
    try {
      const stored = this.#world.files.add(kind, bytes, meta);
      this.#world.counters.add("bytesUploaded", bytes.length);
      return stored;
    } catch (error) {
      if (error instanceof StorageFullError) {
        throw new BotApiSimError("ERR_STORAGE_FULL", `Cannot store the file: ${error.message}`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  #message(chat: ChatRecord, messageId: number): StoredMessage {
    const stored = chat.messages.get(messageId);
    if (stored === undefined) {
      throw new BotApiSimError("ERR_UNKNOWN_MESSAGE", `No message ${messageId} in chat ${chat.id}`);
    }
    return stored;
  }

  #post(
    sender: User,
    chat: ChatRecord,
    content: Record<string, unknown>,
    replyToId: number | undefined,
  ): Message {
    const world = this.#world;
    const replyTo = replyToId === undefined ? undefined : this.#message(chat, replyToId);
    if (replyTo !== undefined) content.reply_to_message = shallow(replyTo.message);
    if (chat.kind === "private") {
      const bot = world.botById(chat.botId as number) as BotRecord;
      if (chat.blocked) {
        // Writing to a blocked bot restarts it, as Telegram's "Restart" button does.
        world.ensureRoom([bot], "message", 2);
        botMemberUpdate(world, chat, bot, sender, "kicked", "member");
        chat.blocked = false;
      }
      chat.started = true;
    }
    return postUserMessage(world, chat, sender, content, (message) =>
      recipientsOf(world, chat, message, replyTo),
    );
  }
}

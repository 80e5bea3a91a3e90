// TelegramClient: the Bot API for a bot — every write through its TelegramOutbox, reads
// (getUpdates, getFile, downloads) straight to the API, sleeping out a 429 instead of failing.

import type { ApiMethods, File, Opts } from "@grammyjs/types";
import { type Clock, checkNumber, type Logger, silentLogger, systemClock } from "@telepace/core";
import {
  type ChatId,
  type OutboxCloseOptions,
  OutboxError,
  type OutboxOperation,
  type OutboxOutcome,
  outboxDefaults,
  Priority,
  RetryAfterError,
  RetryAfterTooLongError,
  TelegramOutbox,
  type TelegramOutboxOptions,
} from "@telepace/outbox";
import {
  BotApiHttp,
  type ByteRange,
  type FileDownload,
  type RequestOptions,
} from "./bot-api-http.js";
import { clientDefaults } from "./defaults.js";
import { type ClientError, TextTooLongError } from "./errors.js";
import { InputFile, type InputFileSource } from "./input-file.js";
import { redactSecret } from "./redact.js";

/** A Bot API method name. */
export type MethodName = keyof ApiMethods<InputFile> & string;
/** The parameters of a method (files as {@link InputFile}). */
export type MethodParams<M extends MethodName> = Opts<InputFile>[M];
/** The result of a method. */
export type MethodResult<M extends MethodName> = ReturnType<ApiMethods<InputFile>[M]>;
/**
 * The outcome of a write made through the client; failures are always an {@link OutboxError} (API,
 * 429, network) or a {@link ClientError} (an upload that could not be repeated).
 */
export type WriteOutcome<T> = OutboxOutcome<T, OutboxError | ClientError>;

/** Text limits of the Bot API, in UTF-16 code units. */
const TEXT_LIMIT = 4096;
const CAPTION_LIMIT = 1024;

/** Options of {@link TelegramClient}. */
export interface TelegramClientOptions {
  /** The bot token from @BotFather. Never logged, never in an error. */
  readonly token: string;
  /**
   * Bot API root: the cloud API, a local Bot API server or the telepace simulator.
   * @defaultValue "https://api.telegram.org"
   */
  readonly apiRoot?: string | undefined;
  /** Time source for timeouts, 429 sleeps and the outbox. @defaultValue systemClock */
  readonly clock?: Clock | undefined;
  /** A pino-compatible logger, shared with the outbox. @defaultValue none (silent) */
  readonly logger?: Logger | undefined;
  /**
   * Per-request timeout (ms); getUpdates adds its long-poll `timeout`. A timed-out write may have
   * reached Telegram. Range: >= 0. @defaultValue 30000
   */
  readonly requestTimeoutMs?: number | undefined;
  /** Connections of the keep-alive pool. Range: integer >= 1. @defaultValue 64 */
  readonly maxConnections?: number | undefined;
  /** Largest JSON response read (bytes). Range: integer >= 1. @defaultValue 67108864 */
  readonly maxResponseBytes?: number | undefined;
  /** Options of the client's {@link TelegramOutbox} (pacing, bounds, caps). */
  readonly outbox?: Omit<TelegramOutboxOptions, "clock" | "logger"> | undefined;
}

/** Options of a write. */
export interface WriteOptions extends RequestOptions {}

/** Options of {@link TelegramClient.sendMessage}. */
export interface SendMessageOptions extends WriteOptions {
  /**
   * Replace a progress message: its pending edit is dropped, the message is sent at send priority,
   * and only once it was delivered is `replaceMessageId` deleted (the outcome's `followUp`). When
   * the send fails the progress message stays.
   */
  readonly replaceMessageId?: number | undefined;
}

/** How {@link TelegramClient.write} schedules a method without a helper. */
export interface ScheduleOptions extends WriteOptions {
  /** The chat paced and ordered with. @defaultValue `params.chat_id` */
  readonly chatId?: ChatId | undefined;
  /** Coalescing key within the chat. @defaultValue none (never coalesced) */
  readonly key?: string | undefined;
  /** @defaultValue Priority.send */
  readonly priority?: number | undefined;
  /** Whether a repeat is harmless. @defaultValue false */
  readonly idempotent?: boolean | undefined;
  /** Whether it takes a chat pacing slot. @defaultValue true */
  readonly paced?: boolean | undefined;
  /** Keys of pending ops it drops. */
  readonly supersedes?: readonly string[] | undefined;
}

/** Options of {@link TelegramClient.downloadFile}. */
export interface DownloadOptions extends RequestOptions {
  /** Only these bytes (HTTP Range); check `isPartial` on the result. */
  readonly range?: ByteRange | undefined;
}

/** Options of {@link TelegramClient.close}. */
export interface ClientCloseOptions extends OutboxCloseOptions {}

type Params = Record<string, unknown>;

function toInputFile(value: InputFile | InputFileSource | string): InputFile | string {
  return typeof value === "string" || value instanceof InputFile ? value : new InputFile(value);
}

function checkText(
  field: "text" | "caption",
  value: unknown,
  limit: number,
  parseMode: unknown,
): void {
  if (value === undefined && field === "caption") return;
  if (typeof value !== "string") {
    throw new TypeError(`Expected \`${field}\` to be a string, got ${typeof value}`);
  }
  if (field === "text" && value.length === 0) {
    throw new RangeError("Expected `text` to be a non-empty string");
  }
  // With parse_mode the limit applies after markup is removed, which only Telegram can count.
  if (parseMode === undefined && value.length > limit)
    throw new TextTooLongError(field, value.length, limit);
}

/**
 * The Bot API over one undici keep-alive pool. Writes go through {@link TelegramClient.outbox}
 * (paced, coalesced, retried) and resolve with a typed outcome; reads go straight to the API and
 * resolve with the result or throw a typed error.
 *
 * @example
 * await using client = new TelegramClient({ token: process.env.TELEGRAM_BOT_TOKEN! });
 * const sent = await client.sendMessage(chatId, "Working… 0%");
 * if (sent.status === "delivered") {
 *   const id = sent.result.message_id;
 *   client.editMessageText(chatId, id, "Working… 50%"); // coalesced if a newer edit arrives
 *   await client.sendMessage(chatId, "Done.", undefined, { replaceMessageId: id });
 * }
 */
export class TelegramClient implements AsyncDisposable {
  /** The outbox every write goes through; `snapshot()` shows its state. */
  readonly outbox: TelegramOutbox;
  readonly #http: BotApiHttp;
  readonly #token: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #requestTimeoutMs: number;
  #closePromise: Promise<void> | undefined;

  /** @throws {TypeError|RangeError} naming the option, when an option is invalid. */
  constructor(options: TelegramClientOptions) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError("Expected `options` to be an object with a `token`");
    }
    const token = options.token;
    if (typeof token !== "string" || !/^[^\s/]+$/.test(token)) {
      // The value itself is never echoed: it may be a real token with a typo.
      throw new TypeError(
        `Expected \`token\` to be a bot token (no spaces or slashes), got ${
          typeof token === "string" ? `a string of ${token.length} characters` : typeof token
        }`,
      );
    }
    let apiRoot: URL;
    try {
      apiRoot = new URL(options.apiRoot ?? clientDefaults.apiRoot);
    } catch {
      throw new TypeError(
        `Expected \`apiRoot\` to be an http(s) URL, got ${String(options.apiRoot)}`,
      );
    }
    if (apiRoot.protocol !== "http:" && apiRoot.protocol !== "https:") {
      throw new TypeError(
        `Expected \`apiRoot\` to be an http(s) URL, got ${String(options.apiRoot)}`,
      );
    }
    this.#token = token;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLogger;
    this.#requestTimeoutMs = checkNumber(
      "requestTimeoutMs",
      options.requestTimeoutMs ?? clientDefaults.requestTimeoutMs,
      { min: 0 },
    );
    const maxConnections = checkNumber(
      "maxConnections",
      options.maxConnections ?? clientDefaults.maxConnections,
      {
        integer: true,
        min: 1,
      },
    );
    const maxResponseBytes = checkNumber(
      "maxResponseBytes",
      options.maxResponseBytes ?? clientDefaults.maxResponseBytes,
      { integer: true, min: 1 },
    );
    this.outbox = new TelegramOutbox({
      ...options.outbox,
      clock: this.#clock,
      logger: this.#logger,
    });
    this.#http = new BotApiHttp({
      apiRoot,
      token,
      clock: this.#clock,
      requestTimeoutMs: this.#requestTimeoutMs,
      maxConnections,
      maxResponseBytes,
    });
  }

  // ---------------------------------------------------------------- raw

  /**
   * Calls any method directly: no outbox, no pacing, no retry. Resolves with the result; throws
   * {@link TelegramApiError}, {@link RetryAfterError}, {@link NetworkError} or the abort reason.
   */
  async call<M extends MethodName>(
    method: M,
    params?: MethodParams<M>,
    options: RequestOptions = {},
  ): Promise<MethodResult<M>> {
    this.#checkOpen();
    try {
      return (await this.#http.call(
        method,
        params as Params | undefined,
        options,
      )) as MethodResult<M>;
    } catch (error) {
      throw redactSecret(error, this.#token);
    }
  }

  // ---------------------------------------------------------------- reads (bypass the outbox)

  /** getMe. A read: not paced; a 429 is slept out. */
  getMe(options: RequestOptions = {}): Promise<MethodResult<"getMe">> {
    return this.#read("getMe", undefined, options);
  }

  /**
   * getUpdates (long polling). Bypasses the outbox; a 429 is slept out (cancellable with the
   * signal) and the call repeated. The request timeout is `timeout` seconds plus
   * `requestTimeoutMs`.
   */
  getUpdates(
    params: MethodParams<"getUpdates"> = {},
    options: RequestOptions = {},
  ): Promise<MethodResult<"getUpdates">> {
    const pollMs = (params.timeout ?? 0) * 1000;
    return this.#read("getUpdates", params, {
      ...options,
      timeoutMs: pollMs + (options.timeoutMs ?? this.#requestTimeoutMs),
    });
  }

  /** getFile: a file's `file_path` for {@link TelegramClient.downloadFile}. A read. */
  getFile(fileId: string, options: RequestOptions = {}): Promise<File> {
    return this.#read("getFile", { file_id: fileId }, options);
  }

  /**
   * Downloads a file by its `file_path` (or the File from getFile) as a stream, optionally a byte
   * range. The timeout covers the wait for the response headers; the body is yours to consume.
   */
  async downloadFile(file: string | File, options: DownloadOptions = {}): Promise<FileDownload> {
    const filePath = typeof file === "string" ? file : file.file_path;
    if (typeof filePath !== "string" || filePath.length === 0) {
      throw new TypeError(
        "Expected `file` to be a file_path or a File with `file_path` (call getFile first)",
      );
    }
    const range = options.range;
    if (range !== undefined) {
      checkNumber("range.start", range.start, { integer: true, min: 0 });
      if (range.end !== undefined)
        checkNumber("range.end", range.end, { integer: true, min: range.start });
    }
    return this.#sleepOn429("downloadFile", options.signal, () =>
      this.#http.download(filePath, range, options),
    );
  }

  // ---------------------------------------------------------------- writes (through the outbox)

  /**
   * sendMessage, at send priority, never coalesced. With `replaceMessageId` it replaces a progress
   * message (see {@link SendMessageOptions}). Text over 4096 UTF-16 units (without `parse_mode`)
   * throws {@link TextTooLongError} before any request.
   */
  async sendMessage(
    chatId: ChatId,
    text: string,
    params: Omit<MethodParams<"sendMessage">, "chat_id" | "text"> = {},
    options: SendMessageOptions = {},
  ): Promise<WriteOutcome<MethodResult<"sendMessage">>> {
    checkText("text", text, TEXT_LIMIT, params.parse_mode);
    const replaced = options.replaceMessageId;
    if (replaced !== undefined)
      checkNumber("replaceMessageId", replaced, { integer: true, min: 1 });
    return this.#enqueue<MethodResult<"sendMessage">>(
      {
        chatId,
        key: replaced === undefined ? undefined : `replace:${replaced}`,
        priority: Priority.send,
        supersedes: replaced === undefined ? undefined : [`edit:${replaced}`],
        execute: (signal) =>
          this.#send("sendMessage", { ...params, chat_id: chatId, text }, signal, options),
        ...(replaced === undefined
          ? {}
          : { followUp: () => this.#deleteOp(chatId, replaced, options) }),
      },
      options,
    );
  }

  /**
   * editMessageText, coalesced per message (a newer edit replaces a pending one). "Message is not
   * modified" is delivered with `notModified: true`. Transient failures are retried.
   */
  async editMessageText(
    chatId: ChatId,
    messageId: number,
    text: string,
    params: Omit<
      MethodParams<"editMessageText">,
      "chat_id" | "message_id" | "text" | "inline_message_id"
    > = {},
    options: WriteOptions = {},
  ): Promise<WriteOutcome<MethodResult<"editMessageText">>> {
    checkText("text", text, TEXT_LIMIT, params.parse_mode);
    checkNumber("messageId", messageId, { integer: true, min: 1 });
    return this.#enqueue(
      {
        chatId,
        key: `edit:${messageId}`,
        priority: Priority.edit,
        idempotent: true,
        execute: (signal) =>
          this.#send(
            "editMessageText",
            { ...params, chat_id: chatId, message_id: messageId, text },
            signal,
            options,
          ),
      },
      options,
    );
  }

  /** deleteMessage at delete priority; drops the message's pending edit. Retried when transient. */
  async deleteMessage(
    chatId: ChatId,
    messageId: number,
    options: WriteOptions = {},
  ): Promise<WriteOutcome<true>> {
    checkNumber("messageId", messageId, { integer: true, min: 1 });
    return this.#enqueue(this.#deleteOp(chatId, messageId, options), options);
  }

  /**
   * sendDocument: a file_id or URL string, an {@link InputFile}, or the bytes/Blob/stream to wrap
   * in one (multipart upload). Caption over 1024 units (without `parse_mode`) throws.
   */
  async sendDocument(
    chatId: ChatId,
    document: InputFile | InputFileSource | string,
    params: Omit<MethodParams<"sendDocument">, "chat_id" | "document"> = {},
    options: WriteOptions = {},
  ): Promise<WriteOutcome<MethodResult<"sendDocument">>> {
    checkText("caption", params.caption, CAPTION_LIMIT, params.parse_mode);
    const file = toInputFile(document);
    return this.#enqueue(
      {
        chatId,
        priority: Priority.send,
        execute: (signal) =>
          this.#send(
            "sendDocument",
            { ...params, chat_id: chatId, document: file },
            signal,
            options,
          ),
      },
      options,
    );
  }

  /** sendPhoto, like {@link TelegramClient.sendDocument}. */
  async sendPhoto(
    chatId: ChatId,
    photo: InputFile | InputFileSource | string,
    params: Omit<MethodParams<"sendPhoto">, "chat_id" | "photo"> = {},
    options: WriteOptions = {},
  ): Promise<WriteOutcome<MethodResult<"sendPhoto">>> {
    checkText("caption", params.caption, CAPTION_LIMIT, params.parse_mode);
    const file = toInputFile(photo);
    return this.#enqueue(
      {
        chatId,
        priority: Priority.send,
        execute: (signal) =>
          this.#send("sendPhoto", { ...params, chat_id: chatId, photo: file }, signal, options),
      },
      options,
    );
  }

  /**
   * answerCallbackQuery: chat-less, so never behind a chat's pacing (only the global budget);
   * coalesced per query id.
   */
  async answerCallbackQuery(
    callbackQueryId: string,
    params: Omit<MethodParams<"answerCallbackQuery">, "callback_query_id"> = {},
    options: WriteOptions = {},
  ): Promise<WriteOutcome<true>> {
    if (typeof callbackQueryId !== "string" || callbackQueryId.length === 0) {
      throw new TypeError("Expected `callbackQueryId` to be a non-empty string");
    }
    return this.#enqueue(
      {
        key: `callback:${callbackQueryId}`,
        priority: Priority.send,
        execute: (signal) =>
          this.#send(
            "answerCallbackQuery",
            { ...params, callback_query_id: callbackQueryId },
            signal,
            options,
          ),
      },
      options,
    );
  }

  /**
   * sendChatAction ("typing", "upload_document", …): kept in the chat's order but takes no pacing
   * slot; a newer action replaces a pending one.
   */
  async sendChatAction(
    chatId: ChatId,
    action: MethodParams<"sendChatAction">["action"],
    params: Omit<MethodParams<"sendChatAction">, "chat_id" | "action"> = {},
    options: WriteOptions = {},
  ): Promise<WriteOutcome<true>> {
    return this.#enqueue(
      {
        chatId,
        key: "chat-action",
        priority: Priority.send,
        idempotent: true,
        paced: false,
        execute: (signal) =>
          this.#send("sendChatAction", { ...params, chat_id: chatId, action }, signal, options),
      },
      options,
    );
  }

  /**
   * Any other write, through the outbox. By default it is paced with `params.chat_id`, at send
   * priority, never coalesced and never repeated once it may have reached Telegram.
   *
   * @example
   * await client.write("setMessageReaction", { chat_id, message_id, reaction }, { key: `react:${message_id}`, idempotent: true });
   */
  async write<M extends MethodName>(
    method: M,
    params: MethodParams<M>,
    options: ScheduleOptions = {},
  ): Promise<WriteOutcome<MethodResult<M>>> {
    const chatId = options.chatId ?? (params as { chat_id?: ChatId }).chat_id;
    return this.#enqueue(
      {
        chatId,
        key: options.key,
        priority: options.priority ?? Priority.send,
        idempotent: options.idempotent,
        paced: options.paced,
        supersedes: options.supersedes,
        execute: (signal) => this.#send(method, params as Params, signal, options),
      },
      options,
    );
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Flushes the outbox (by default draining it, within `timeoutMs`), then closes the connection
   * pool; reads still in flight (a long poll, a download) get what is left of the deadline.
   * Calling it again returns the same promise.
   */
  close(options: ClientCloseOptions = {}): Promise<void> {
    if (this.#closePromise !== undefined) return this.#closePromise;
    const timeoutMs = checkNumber("timeoutMs", options.timeoutMs ?? outboxDefaults.closeTimeoutMs, {
      min: 0,
    });
    const started = this.#clock.now();
    this.#closePromise = (async () => {
      await this.outbox.close({ ...options, timeoutMs });
      const leftMs = Math.max(0, timeoutMs - (this.#clock.now() - started));
      let timer: { cancel(): void } | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = this.#clock.setTimer(resolve, leftMs);
      });
      const graceful = this.#http.close().then(() => true);
      const finishedInTime = await Promise.race([graceful, deadline.then(() => false)]);
      timer?.cancel();
      if (!finishedInTime) await this.#http.destroy();
    })();
    return this.#closePromise;
  }

  /** `close()` with its defaults, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---------------------------------------------------------------- internals

  #checkOpen(): void {
    if (this.#closePromise !== undefined) {
      throw new OutboxError("ERR_OUTBOX_CLOSED", "The TelegramClient is closed");
    }
  }

  #enqueue<T>(op: OutboxOperation<T>, options: WriteOptions): Promise<WriteOutcome<T>> {
    return this.outbox.enqueue(op, { signal: options.signal }) as Promise<WriteOutcome<T>>;
  }

  #deleteOp(chatId: ChatId, messageId: number, options: WriteOptions): OutboxOperation<true> {
    return {
      chatId,
      key: `delete:${messageId}`,
      priority: Priority.delete,
      idempotent: true,
      supersedes: [`edit:${messageId}`],
      execute: (signal) =>
        this.#send("deleteMessage", { chat_id: chatId, message_id: messageId }, signal, options),
    };
  }

  /** One attempt of a write, on the outbox's signal; the caller's timeout applies. */
  async #send(
    method: string,
    params: Params,
    signal: AbortSignal,
    options: WriteOptions,
  ): Promise<never> {
    try {
      return (await this.#http.call(method, params, {
        signal,
        timeoutMs: options.timeoutMs,
      })) as never;
    } catch (error) {
      throw redactSecret(error, this.#token);
    }
  }

  async #read<T>(method: string, params: Params | undefined, options: RequestOptions): Promise<T> {
    return this.#sleepOn429(
      method,
      options.signal,
      async () => (await this.#http.call(method, params, options)) as T,
    );
  }

  /** Repeats a read after each 429, sleeping `retry_after` (capped, cancellable) in between. */
  async #sleepOn429<T>(
    method: string,
    signal: AbortSignal | undefined,
    attempt: () => Promise<T>,
  ): Promise<T> {
    this.#checkOpen();
    for (;;) {
      try {
        return await attempt();
      } catch (error) {
        redactSecret(error, this.#token);
        if (!(error instanceof RetryAfterError)) throw error;
        const cap = this.outbox.maxRetryAfterMs;
        if (error.retryAfterMs > cap)
          throw new RetryAfterTooLongError(error.retryAfterMs, cap, { cause: error });
        this.#logger.warn(
          { method, retryAfterMs: error.retryAfterMs },
          "rate limited (429): sleeping",
        );
        await this.#clock.sleep(error.retryAfterMs, { signal });
        this.#checkOpen();
      }
    }
  }
}

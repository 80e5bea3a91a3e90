// TelegramClient: the Bot API for a bot — every write through its TelegramOutbox, reads
// (getUpdates, getFile, downloads) straight to the API, sleeping out a 429 within bounds.

import type { File } from "@grammyjs/types";
import {
  type Clock,
  checkBoolean,
  checkNumber,
  checkOptionalNumber,
  checkOptions,
  type Logger,
} from "@telepace/core";
import {
  type ChatId,
  type MessageStream,
  OutboxError,
  type OutboxOperation,
  outboxDefaults,
  Priority,
  planWrite,
  replacingProgress,
  type StreamMessageOptions,
  StreamRegistry,
  type StreamSource,
  TelegramOutbox,
  type WriteMethodName,
  writeOperation,
} from "@telepace/outbox";
import {
  CAPTION_LIMIT,
  type CheckedRequestOptions,
  checkByteRange,
  checkChatId,
  checkMessageId,
  checkNonEmptyString,
  checkParams,
  checkRequestOptions,
  checkText,
  TEXT_LIMIT,
} from "./arguments.js";
import { BotApiHttp, type FileDownload, type RequestOptions } from "./bot-api-http.js";
import {
  type ClientCloseOptions,
  containedLogger,
  type DownloadOptions,
  type MethodName,
  type MethodParams,
  type MethodResult,
  type Params,
  resolveClientOptions,
  SCHEDULE_OPTION_KEYS,
  type ScheduleOptions,
  type SendMessageOptions,
  type SendOutcome,
  type TelegramClientOptions,
  toInputFile,
  type WriteOptions,
  type WriteOutcome,
} from "./client-options.js";
import { ClientError, ReadRetryLimitError } from "./errors.js";
import type { InputFile, InputFileSource } from "./input-file.js";
import { ReadRetry } from "./read-retry.js";
import { redactSecret } from "./redact.js";

/**
 * The Bot API over one undici keep-alive pool. Writes go through {@link TelegramClient.outbox}
 * (paced, coalesced, retried) and resolve with a typed outcome; reads go straight to the API and
 * resolve with the result or throw a typed error.
 *
 * Every method checks its arguments first and throws a `TypeError` or `RangeError` synchronously
 * (before anything is queued or sent) when one is invalid; a failure of the request itself is an
 * outcome (writes) or a rejection (reads).
 *
 * @example
 * await using client = new TelegramClient({ token: process.env.TELEGRAM_BOT_TOKEN! });
 * const sent = await client.sendMessage(chatId, "Working… 0%");
 * if (sent.status === "delivered") {
 *   const id = sent.result.message_id;
 *   void client.editMessageText(chatId, id, "Working… 50%"); // coalesced if a newer edit arrives
 *   await client.sendMessage(chatId, "Done.", undefined, { replaceMessageId: id });
 * }
 */
export class TelegramClient implements AsyncDisposable {
  /** The outbox every write goes through; `snapshot()` shows its state. */
  readonly outbox: TelegramOutbox;
  /**
   * The client's streamed messages: pass every update to `streams.handleUpdate(update)` so a
   * Stop press (`stopped_message_generation`) reaches its stream.
   */
  readonly streams: StreamRegistry;
  readonly #http: BotApiHttp;
  readonly #token: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #requestTimeoutMs: number;
  readonly #readRetry: ReadRetry;
  #closePromise: Promise<void> | undefined;

  /** @throws {TypeError|RangeError} naming the option, when an option is invalid. */
  constructor(options: TelegramClientOptions) {
    const resolved = resolveClientOptions(options);
    this.#token = resolved.token;
    this.#clock = resolved.clock;
    this.#logger = resolved.logger;
    this.#requestTimeoutMs = resolved.requestTimeoutMs;
    this.#readRetry = new ReadRetry({
      ...resolved.readRetry,
      clock: this.#clock,
      logger: this.#logger,
      token: this.#token,
      maxRetryAfterMs: () => this.outbox.maxRetryAfterMs,
      checkOpen: () => this.#checkOpen(),
    });
    this.outbox = new TelegramOutbox({
      ...resolved.outbox,
      clock: this.#clock,
      logger: containedLogger(this.#logger),
    });
    this.#http = new BotApiHttp({
      apiRoot: resolved.apiRoot,
      token: this.#token,
      clock: this.#clock,
      requestTimeoutMs: this.#requestTimeoutMs,
      maxConnections: resolved.maxConnections,
      maxResponseBytes: resolved.maxResponseBytes,
    });
    const noOptions = { signal: undefined, timeoutMs: undefined, given: {} };
    this.streams = new StreamRegistry({
      outbox: this.outbox,
      clock: this.#clock,
      transport: (method, params, signal) => this.#attempt(method, params, signal, noOptions),
    });
  }

  // ---------------------------------------------------------------- raw

  /**
   * Calls any method directly: no outbox, no pacing, no retry. Resolves with the result; rejects
   * with {@link TelegramApiError}, {@link RetryAfterError}, {@link NetworkError} or the abort
   * reason.
   *
   * @throws {TypeError|RangeError} synchronously, for an invalid argument.
   */
  call<M extends MethodName>(
    method: M,
    params?: MethodParams<M>,
    options: RequestOptions = {},
  ): Promise<MethodResult<M>> {
    checkNonEmptyString("method", method);
    const checkedParams = checkParams(params);
    const checked = checkRequestOptions(options);
    return (async () => {
      this.#checkOpen();
      try {
        return (await this.#http.call(method, checkedParams, checked)) as MethodResult<M>;
      } catch (error) {
        throw redactSecret(error, this.#token);
      }
    })();
  }

  // ---------------------------------------------------------------- reads (bypass the outbox)

  /** getMe. A read: not paced; a 429 is slept out (bounded, see {@link ReadRetryLimitError}). */
  getMe(options: RequestOptions = {}): Promise<MethodResult<"getMe">> {
    const checked = checkRequestOptions(options);
    return this.#read("getMe", undefined, checked);
  }

  /**
   * getUpdates (long polling). Bypasses the outbox; a 429 is slept out (bounded, cancellable with
   * the signal) and the call repeated. The request timeout is `timeout` seconds plus
   * `requestTimeoutMs`.
   */
  getUpdates(
    params: MethodParams<"getUpdates"> = {},
    options: RequestOptions = {},
  ): Promise<MethodResult<"getUpdates">> {
    const checkedParams = checkParams(params);
    const pollS =
      checkedParams.timeout === undefined
        ? 0
        : checkNumber("timeout", checkedParams.timeout, { integer: true, min: 0 });
    const checked = checkRequestOptions(options);
    return this.#read("getUpdates", checkedParams, {
      signal: checked.signal,
      timeoutMs: pollS * 1000 + (checked.timeoutMs ?? this.#requestTimeoutMs),
    });
  }

  /** getFile: a file's `file_path` for {@link TelegramClient.downloadFile}. A read. */
  getFile(fileId: string, options: RequestOptions = {}): Promise<File> {
    checkNonEmptyString("fileId", fileId);
    const checked = checkRequestOptions(options);
    return this.#read("getFile", { file_id: fileId }, checked);
  }

  /**
   * Downloads a file by its `file_path` (or the File from getFile) as a stream, optionally a byte
   * range. The timeout covers the wait for the response headers; the body is yours to consume.
   * A read: a 429 is slept out (bounded).
   */
  downloadFile(file: string | File, options: DownloadOptions = {}): Promise<FileDownload> {
    const filePath = typeof file === "string" ? file : (file as Partial<File> | null)?.file_path;
    if (typeof filePath !== "string" || filePath.length === 0) {
      throw new TypeError(
        "Expected `file` to be a file_path or a File with `file_path` (call getFile first)",
      );
    }
    const checked = checkRequestOptions(options, ["range"]);
    const range = checkByteRange(checked.given.range);
    return this.#readRetry.run("downloadFile", checked.signal, () =>
      this.#http.download(filePath, range, checked),
    );
  }

  // ---------------------------------------------------------------- writes (through the outbox)

  /**
   * sendMessage, at send priority, never coalesced. With `replaceMessageId` it replaces a progress
   * message (see {@link SendMessageOptions}). Text over 4096 UTF-16 units (without `parse_mode`)
   * throws {@link TextTooLongError} before any request.
   *
   * @throws {TypeError|RangeError|TextTooLongError} synchronously, for an invalid argument.
   */
  sendMessage(
    chatId: ChatId,
    text: string,
    params: Omit<MethodParams<"sendMessage">, "chat_id" | "text"> = {},
    options: SendMessageOptions = {},
  ): Promise<SendOutcome<MethodResult<"sendMessage">>> {
    checkChatId(chatId);
    const extra = checkParams(params);
    checkText("text", text, TEXT_LIMIT, extra.parse_mode);
    const checked = checkRequestOptions(options, ["replaceMessageId"]);
    const replaced = checked.given.replaceMessageId;
    if (replaced !== undefined) checkMessageId(replaced, "replaceMessageId");
    const send = this.#op<MethodResult<"sendMessage">>(
      "sendMessage",
      { ...extra, chat_id: chatId, text },
      checked,
    );
    if (replaced === undefined) return this.#send(send, checked);
    const progressId = replaced as number;
    const remove = { chat_id: chatId, message_id: progressId };
    return this.#send(
      replacingProgress(send, progressId, (signal) =>
        this.#attempt("deleteMessage", remove, signal, checked),
      ),
      checked,
    );
  }

  /**
   * editMessageText, coalesced per message (a newer edit replaces a pending one). "Message is not
   * modified" is delivered with `notModified: true`. Transient failures are retried.
   *
   * @throws {TypeError|RangeError|TextTooLongError} synchronously, for an invalid argument.
   */
  editMessageText(
    chatId: ChatId,
    messageId: number,
    text: string,
    params: Omit<
      MethodParams<"editMessageText">,
      "chat_id" | "message_id" | "text" | "inline_message_id"
    > = {},
    options: WriteOptions = {},
  ): Promise<WriteOutcome<MethodResult<"editMessageText">>> {
    checkChatId(chatId);
    checkMessageId(messageId);
    const extra = checkParams(params);
    checkText("text", text, TEXT_LIMIT, extra.parse_mode);
    const checked = checkRequestOptions(options);
    return this.#enqueue(
      this.#op(
        "editMessageText",
        { ...extra, chat_id: chatId, message_id: messageId, text },
        checked,
      ),
      checked,
    );
  }

  /**
   * deleteMessage at delete priority; drops the message's pending edit. Retried when transient.
   *
   * @throws {TypeError|RangeError} synchronously, for an invalid argument.
   */
  deleteMessage(
    chatId: ChatId,
    messageId: number,
    options: WriteOptions = {},
  ): Promise<SendOutcome<true>> {
    checkChatId(chatId);
    checkMessageId(messageId);
    const checked = checkRequestOptions(options);
    return this.#send(
      this.#op("deleteMessage", { chat_id: chatId, message_id: messageId }, checked),
      checked,
    );
  }

  /**
   * sendDocument: a file_id or URL string, an {@link InputFile}, or the bytes/Blob/stream to wrap
   * in one (multipart upload). Caption over 1024 units (without `parse_mode`) throws.
   *
   * @throws {TypeError|RangeError|TextTooLongError} synchronously, for an invalid argument.
   */
  sendDocument(
    chatId: ChatId,
    document: InputFile | InputFileSource | string,
    params: Omit<MethodParams<"sendDocument">, "chat_id" | "document"> = {},
    options: WriteOptions = {},
  ): Promise<SendOutcome<MethodResult<"sendDocument">>> {
    return this.#sendFile("sendDocument", "document", chatId, document, params, options);
  }

  /** sendPhoto, like {@link TelegramClient.sendDocument}. */
  sendPhoto(
    chatId: ChatId,
    photo: InputFile | InputFileSource | string,
    params: Omit<MethodParams<"sendPhoto">, "chat_id" | "photo"> = {},
    options: WriteOptions = {},
  ): Promise<SendOutcome<MethodResult<"sendPhoto">>> {
    return this.#sendFile("sendPhoto", "photo", chatId, photo, params, options);
  }

  /**
   * answerCallbackQuery: chat-less, so never behind a chat's pacing (only the global budget);
   * coalesced per query id.
   *
   * @throws {TypeError|RangeError} synchronously, for an invalid argument.
   */
  answerCallbackQuery(
    callbackQueryId: string,
    params: Omit<MethodParams<"answerCallbackQuery">, "callback_query_id"> = {},
    options: WriteOptions = {},
  ): Promise<SendOutcome<true>> {
    checkNonEmptyString("callbackQueryId", callbackQueryId);
    const extra = checkParams(params);
    const checked = checkRequestOptions(options);
    return this.#send(
      this.#op("answerCallbackQuery", { ...extra, callback_query_id: callbackQueryId }, checked),
      checked,
    );
  }

  /**
   * sendChatAction ("typing", "upload_document", …): kept in the chat's order but takes no pacing
   * slot; a newer action replaces a pending one.
   *
   * @throws {TypeError|RangeError} synchronously, for an invalid argument.
   */
  sendChatAction(
    chatId: ChatId,
    action: MethodParams<"sendChatAction">["action"],
    params: Omit<MethodParams<"sendChatAction">, "chat_id" | "action"> = {},
    options: WriteOptions = {},
  ): Promise<SendOutcome<true>> {
    checkChatId(chatId);
    checkNonEmptyString("action", action);
    const extra = checkParams(params);
    const checked = checkRequestOptions(options);
    return this.#send(
      this.#op("sendChatAction", { ...extra, chat_id: chatId, action }, checked),
      checked,
    );
  }

  /**
   * Any other write, through the outbox. By default it is paced with `params.chat_id`, at send
   * priority, never coalesced and never repeated once it may have reached Telegram.
   *
   * @throws {TypeError|RangeError} synchronously, for an invalid argument (a `chat_id` key that
   * is `undefined`, `null` or `""` included).
   *
   * @example
   * await client.write("setMessageReaction", { chat_id, message_id, reaction }, { key: `react:${message_id}`, idempotent: true });
   */
  write<M extends MethodName>(
    method: M,
    params: MethodParams<M>,
    options: ScheduleOptions = {},
  ): Promise<WriteOutcome<MethodResult<M>>> {
    checkNonEmptyString("method", method);
    const checkedParams = checkParams(params);
    const checked = checkRequestOptions(options, SCHEDULE_OPTION_KEYS);
    const { given } = checked;
    const chatId =
      given.chatId !== undefined
        ? checkChatId(given.chatId)
        : "chat_id" in checkedParams
          ? checkChatId(checkedParams.chat_id, "params.chat_id")
          : undefined;
    return this.#enqueue(
      {
        chatId,
        key: given.key as string | undefined,
        priority: (given.priority as number | undefined) ?? Priority.send,
        idempotent: given.idempotent as boolean | undefined,
        paced: given.paced as boolean | undefined,
        supersedes: given.supersedes as readonly string[] | undefined,
        execute: (signal) => this.#attempt(method, checkedParams, signal, checked),
      },
      checked,
    );
  }

  /**
   * Streams a message as it is generated: `sendMessageDraft` frames in a private chat (paced,
   * latest text wins, ending in a real message), a progress message with coalesced edits in groups
   * or where drafts are refused, continued in a new message past 4096 UTF-16 units. With a
   * `source` (pieces appended, e.g. an LLM's tokens) the stream ends with it; without, feed it with
   * `append`/`replace` and call `end()`. Await `stream.result` for the outcome.
   *
   * @throws {TypeError|RangeError} synchronously, for an invalid chat id, source or option.
   * @example
   * const stream = client.streamMessage(chatId, (signal) => model.tokens(prompt, { signal }), { canStop: true });
   * const outcome = await stream.result; // outcome.messages: what is now in the chat
   */
  streamMessage(
    chatId: ChatId,
    source?: StreamSource,
    options?: StreamMessageOptions,
  ): MessageStream {
    checkChatId(chatId);
    return source === undefined
      ? this.streams.open(chatId, options)
      : this.streams.pipe(chatId, source, options);
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Flushes the outbox (by default draining it, within `timeoutMs`), then closes the connection
   * pool; reads still in flight (a long poll, a download) get what is left of the deadline.
   * Calling it again returns the same promise.
   */
  close(options: ClientCloseOptions = {}): Promise<void> {
    if (this.#closePromise !== undefined) return this.#closePromise;
    const given = checkOptions("options", options, ["drain", "timeoutMs"]);
    const drain = checkBoolean("drain", given.drain, true);
    const timeoutMs = checkOptionalNumber(
      "timeoutMs",
      given.timeoutMs,
      outboxDefaults.closeTimeoutMs,
      { min: 0 },
    );
    const started = this.#clock.now();
    this.#closePromise = (async () => {
      await this.outbox.close({ drain, timeoutMs });
      await this.#http.close(Math.max(0, timeoutMs - (this.#clock.now() - started)));
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

  /**
   * Enqueues one of the client's own writes, and tells its streams of it: a delete (or a
   * replacing send) of a stream's progress message drops the edit that stream holds back, and a
   * message the client sent is newer than a stream's progress message in that chat.
   */
  #enqueue<T>(op: OutboxOperation<T>, options: CheckedRequestOptions): Promise<WriteOutcome<T>> {
    this.streams.noteWrite(op);
    const outcome = this.outbox.enqueue(op, { signal: options.signal }) as Promise<WriteOutcome<T>>;
    if (op.chatId === undefined) return outcome;
    const chatId = op.chatId;
    return outcome.then((settled) => {
      if (settled.status === "delivered" && !settled.notModified) {
        for (const id of messageIdsOf(settled.result)) this.streams.noteMessage(chatId, id);
      }
      return settled;
    });
  }

  /**
   * Enqueues an op that is not an edit. Telegram answers "not modified" only to edits, so only a
   * custom `classifyFailure` could produce one here: it becomes a failure rather than a delivered
   * outcome without a result.
   */
  #send<T>(op: OutboxOperation<T>, options: CheckedRequestOptions): Promise<SendOutcome<T>> {
    return this.#enqueue(op, options).then((outcome) =>
      outcome.status === "delivered" && outcome.notModified
        ? {
            status: "failed",
            error: new ClientError(
              "ERR_UNEXPECTED_NOT_MODIFIED",
              "The failure classifier answered not-modified for a write that is not an edit",
            ),
            attempts: outcome.attempts,
            maybeDelivered: true,
          }
        : outcome,
    );
  }

  #sendFile<M extends "sendDocument" | "sendPhoto">(
    method: M,
    field: "document" | "photo",
    chatId: ChatId,
    file: unknown,
    params: unknown,
    options: unknown,
  ): Promise<SendOutcome<MethodResult<M>>> {
    checkChatId(chatId);
    const extra = checkParams(params);
    checkText("caption", extra.caption, CAPTION_LIMIT, extra.parse_mode);
    const checked = checkRequestOptions(options);
    const input = toInputFile(file, field);
    return this.#send(
      this.#op<MethodResult<M>>(method, { ...extra, chat_id: chatId, [field]: input }, checked),
      checked,
    );
  }

  /** The op of a write, scheduled as the outbox plans `method` with these params. */
  #op<T>(
    method: WriteMethodName,
    params: Params,
    options: CheckedRequestOptions,
  ): OutboxOperation<T> {
    return writeOperation(planWrite(method, params), (signal) =>
      this.#attempt(method, params, signal, options),
    );
  }

  /** One attempt of a write, on the outbox's signal; the caller's timeout applies. */
  async #attempt(
    method: string,
    params: Params,
    signal: AbortSignal,
    options: CheckedRequestOptions,
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

  #read<T>(method: string, params: Params | undefined, options: RequestOptions): Promise<T> {
    return this.#readRetry.run(
      method,
      options.signal,
      async () => (await this.#http.call(method, params, options)) as T,
    );
  }
}

/** The ids of the messages a write's result names: one message, or an album's. */
function messageIdsOf(result: unknown): number[] {
  const messages = Array.isArray(result) ? result : [result];
  return messages.flatMap((message) => {
    const id = (message as { message_id?: unknown } | null)?.message_id;
    return typeof id === "number" ? [id] : [];
  });
}

// The client's types and options: method names and outcomes, TelegramClientOptions and the
// per-call options, and how they are checked before anything is queued.

import type { ApiMethods, Opts } from "@grammyjs/types";
import {
  type Clock,
  checkClock,
  checkLogger,
  checkOptionalNumber,
  checkOptions,
  describeValue,
  type Logger,
  type LogLevel,
  type LogMethod,
  type NumberRule,
  safeLog,
  silentLogger,
  systemClock,
} from "@telepace/core";
import {
  type ChatId,
  type OutboxCloseOptions,
  type OutboxError,
  type OutboxNotModified,
  type OutboxOutcome,
  outboxOptionNames,
  TelegramOutbox,
  type TelegramOutboxOptions,
} from "@telepace/outbox";
import { checkNonEmptyString } from "./arguments.js";
import type { ByteRange, RequestOptions } from "./bot-api-http.js";
import { clientDefaults } from "./defaults.js";
import { type ClientError, ReadRetryLimitError } from "./errors.js";
import { InputFile, type InputFileSource } from "./input-file.js";

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

/** The outbox options a client passes through (its `clock` and `logger` are the client's). */
export type ClientOutboxOptions = Omit<TelegramOutboxOptions, "clock" | "logger">;

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
  /**
   * A pino-compatible logger, shared with the outbox. A method that throws or returns a rejected
   * promise is contained. @defaultValue none (silent)
   */
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
  /**
   * 429s one read (getMe, getUpdates, getFile, a download) sleeps out; the next one throws
   * {@link ReadRetryLimitError}. 0: a read never retries a 429. Range: integer >= 0.
   * @defaultValue 5
   */
  readonly maxReadRetries?: number | undefined;
  /**
   * Most milliseconds one read sleeps on 429s in all; a 429 whose wait would pass it throws
   * {@link ReadRetryLimitError} at once. Range: >= 0. @defaultValue 300000
   */
  readonly maxReadRetryWaitMs?: number | undefined;
  /**
   * Shortest sleep (ms) of a read after a 429, whatever `retry_after` said: `retry_after: 0`
   * would otherwise repeat the read as fast as the network allows. Range: >= 0.
   * @defaultValue 1000
   */
  readonly minReadRetryDelayMs?: number | undefined;
  /** Options of the client's {@link TelegramOutbox} (pacing, bounds, caps of the writes). */
  readonly outbox?: ClientOutboxOptions | undefined;
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
  /** Coalescing key within the chat (build it with `writeKeys`). @defaultValue none (never coalesced) */
  readonly key?: string | undefined;
  /** @defaultValue Priority.send */
  readonly priority?: number | undefined;
  /** Whether a repeat is harmless. @defaultValue false */
  readonly idempotent?: boolean | undefined;
  /** Whether it takes a chat pacing slot. @defaultValue true */
  readonly paced?: boolean | undefined;
  /** Keys of pending ops it drops (e.g. `writeKeys.editsOf(messageId)`). */
  readonly supersedes?: readonly string[] | undefined;
}

/** Options of {@link TelegramClient.downloadFile}. */
export interface DownloadOptions extends RequestOptions {
  /** Only these bytes (HTTP Range); check `isPartial` on the result. */
  readonly range?: ByteRange | undefined;
}

/** Options of {@link TelegramClient.close}. */
export interface ClientCloseOptions extends OutboxCloseOptions {}

/** Bot API parameters as the client sends them. */
export type Params = Record<string, unknown>;

/**
 * The outcome of a write that only an edit could answer with "not modified": a send, a delete, a
 * chat action or a callback answer is delivered with a `result`, or not delivered at all.
 */
export type SendOutcome<T> = Exclude<WriteOutcome<T>, OutboxNotModified>;

export const CLIENT_OPTION_KEYS = [
  "token",
  "apiRoot",
  "clock",
  "logger",
  "requestTimeoutMs",
  "maxConnections",
  "maxResponseBytes",
  "maxReadRetries",
  "maxReadRetryWaitMs",
  "minReadRetryDelayMs",
  "outbox",
] as const satisfies readonly (keyof TelegramClientOptions)[];

/** The outbox options that are the client's own, shared with its outbox. */
const SHARED_WITH_OUTBOX: readonly string[] = ["clock", "logger"] satisfies readonly Exclude<
  keyof TelegramOutboxOptions,
  keyof ClientOutboxOptions
>[];

// The outbox's own list, less the options the client shares with it.
const OUTBOX_OPTION_KEYS: readonly (keyof ClientOutboxOptions)[] = outboxOptionNames.filter(
  (key): key is keyof ClientOutboxOptions => !SHARED_WITH_OUTBOX.includes(key),
);

export const SCHEDULE_OPTION_KEYS = [
  "chatId",
  "key",
  "priority",
  "idempotent",
  "paced",
  "supersedes",
];

/** Checks the nested `outbox` options the client cannot leave to the outbox: unknown keys, null. */
export function checkOutboxOptions(value: unknown): ClientOutboxOptions {
  if (value !== null && typeof value === "object") {
    for (const shared of SHARED_WITH_OUTBOX) {
      if (shared in value) {
        throw new TypeError(
          `Unknown option \`${shared}\` in \`outbox\` (the client's own \`${shared}\` is shared with its outbox)`,
        );
      }
    }
  }
  const given = checkOptions("outbox", value, OUTBOX_OPTION_KEYS);
  // The outbox reads these with `??`, so a null would quietly become the default; a null
  // `pacingStore` it rejects itself.
  for (const [key, inner] of Object.entries(given)) {
    if (inner === null && key !== "pacingStore") {
      const kind = key === "classifyFailure" ? "a function" : "a number";
      throw new TypeError(`Expected \`${key}\` to be ${kind}, got null`);
    }
  }
  return given as ClientOutboxOptions;
}

/** A logger for the outbox that contains a failing method the same way the client does. */
export function containedLogger(logger: Logger): Logger {
  if (logger === silentLogger) return logger;
  const level =
    (name: LogLevel): LogMethod =>
    (fields, message) =>
      safeLog(logger, name, fields, message);
  return Object.freeze({
    debug: level("debug"),
    info: level("info"),
    warn: level("warn"),
    error: level("error"),
  });
}

export function toInputFile(value: unknown, name: string): InputFile | string {
  if (typeof value === "string") return checkNonEmptyString(name, value);
  return value instanceof InputFile ? value : new InputFile(value as InputFileSource);
}

/** {@link TelegramClientOptions} checked whole, with the defaults applied. */
export interface ResolvedClientOptions {
  readonly token: string;
  readonly apiRoot: URL;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly requestTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxResponseBytes: number;
  readonly readRetry: { maxRetries: number; maxWaitMs: number; minDelayMs: number };
  readonly outbox: ClientOutboxOptions;
}

/**
 * Checks the client's options whole and applies the defaults.
 * @throws {TypeError|RangeError} naming the option, when one is invalid.
 */
export function resolveClientOptions(options: unknown): ResolvedClientOptions {
  // The options are required (the token is in them): name them, not the token, when they are
  // absent. A string is most likely the token itself, so it is never echoed.
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    const got =
      typeof options === "string"
        ? "a string (pass `{ token }`, not the token itself)"
        : describeValue(options);
    throw new TypeError(
      `Expected \`options\` to be an object with the bot's \`token\`, got ${got}`,
    );
  }
  const given = checkOptions("options", options, CLIENT_OPTION_KEYS);
  const token = given.token;
  if (typeof token !== "string" || !/^[^\s/]+$/.test(token)) {
    // The value itself is never echoed: it may be a real token with a typo.
    throw new TypeError(
      `Expected \`token\` to be a bot token (no spaces or slashes), got ${
        typeof token === "string" ? `a string of ${token.length} characters` : typeof token
      }`,
    );
  }
  const rawRoot = given.apiRoot === undefined ? clientDefaults.apiRoot : given.apiRoot;
  let apiRoot: URL | undefined;
  try {
    apiRoot = typeof rawRoot === "string" ? new URL(rawRoot) : undefined;
  } catch {
    apiRoot = undefined;
  }
  if (apiRoot === undefined || (apiRoot.protocol !== "http:" && apiRoot.protocol !== "https:")) {
    throw new TypeError(
      `Expected \`apiRoot\` to be an http(s) URL, got ${
        typeof rawRoot === "string" ? rawRoot : describeValue(rawRoot)
      }`,
    );
  }
  const number = (
    name: keyof typeof clientDefaults & keyof TelegramClientOptions,
    rule: NumberRule,
  ) => checkOptionalNumber(name, given[name], clientDefaults[name] as number, rule);
  return {
    token,
    apiRoot,
    clock: checkClock(given.clock, systemClock),
    logger: checkLogger(given.logger),
    requestTimeoutMs: number("requestTimeoutMs", { min: 0 }),
    maxConnections: number("maxConnections", { integer: true, min: 1 }),
    maxResponseBytes: number("maxResponseBytes", { integer: true, min: 1 }),
    readRetry: {
      maxRetries: number("maxReadRetries", { integer: true, min: 0 }),
      maxWaitMs: number("maxReadRetryWaitMs", { min: 0 }),
      minDelayMs: number("minReadRetryDelayMs", { min: 0 }),
    },
    outbox: checkOutboxOptions(given.outbox),
  };
}

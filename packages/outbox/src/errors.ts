// The error family of @telepace/outbox: one base class with a stable `code`, one subclass per
// failure a caller can act on differently. These are the failures any transport reports to the
// outbox and `classifyFailure` understands, so they live here; `@telepace/client` creates them
// (it depends on this package, never the other way round).

import type { ResponseParameters } from "@grammyjs/types";
import { brandErrors } from "@telepace/core";

/** Stable codes of {@link OutboxError}. Match on these, never on `message`. */
export type OutboxErrorCode =
  | "ERR_OUTBOX_CLOSED"
  | "ERR_OUTBOX_FULL"
  | "ERR_SUPERSEDED"
  | "ERR_RETRY_AFTER"
  | "ERR_RETRY_AFTER_TOO_LONG"
  | "ERR_TELEGRAM_API"
  | "ERR_CHAT_MIGRATED"
  | "ERR_FORBIDDEN"
  | "ERR_NETWORK"
  | "ERR_STREAM_STOPPED"
  | "ERR_STREAM_ENDED";

/** Base class of every error @telepace/outbox creates. */
export class OutboxError extends Error {
  /** Stable machine-readable code. */
  readonly code: OutboxErrorCode;

  constructor(code: OutboxErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "OutboxError";
    this.code = code;
  }
}

/** Options of {@link RetryAfterError}. */
export interface RetryAfterErrorOptions extends ErrorOptions {
  /** The Bot API method that was rate limited, when known. */
  readonly method?: string | undefined;
  /** Telegram's description, e.g. "Too Many Requests: retry after 3". */
  readonly description?: string | undefined;
}

/**
 * A 429: wait `retryAfterMs` before trying again. Throw it from an op's `execute` (or use
 * `retryAfterFrom`) so the outbox freezes the chat and requeues the op.
 */
export class RetryAfterError extends OutboxError {
  declare readonly code: "ERR_RETRY_AFTER";
  /** How long to wait, in milliseconds. */
  readonly retryAfterMs: number;
  /** The method that was rate limited, when known. */
  readonly method: string | undefined;
  /** Telegram's description, when known. */
  readonly description: string | undefined;

  constructor(retryAfterMs: number, options: RetryAfterErrorOptions = {}) {
    const where = options.method === undefined ? "" : ` (${options.method})`;
    super("ERR_RETRY_AFTER", `Rate limited${where}: retry after ${retryAfterMs} ms`, options);
    this.name = "RetryAfterError";
    this.retryAfterMs = retryAfterMs;
    this.method = options.method;
    this.description = options.description;
  }
}

/**
 * A 429 whose `retry_after` is above `maxRetryAfterMs`: the op failed instead of stalling its
 * chat (or the whole outbox) for that long. The chat stays frozen for the full wait.
 */
export class RetryAfterTooLongError extends OutboxError {
  declare readonly code: "ERR_RETRY_AFTER_TOO_LONG";
  /** How long Telegram asked to wait, in milliseconds (what is left of it when the op failed). */
  readonly retryAfterMs: number;
  /** The configured cap it exceeded. */
  readonly maxRetryAfterMs: number;

  constructor(retryAfterMs: number, maxRetryAfterMs: number, options?: ErrorOptions) {
    super(
      "ERR_RETRY_AFTER_TOO_LONG",
      `Rate limited for ${retryAfterMs} ms, more than maxRetryAfterMs (${maxRetryAfterMs} ms)`,
      options,
    );
    this.name = "RetryAfterTooLongError";
    this.retryAfterMs = retryAfterMs;
    this.maxRetryAfterMs = maxRetryAfterMs;
  }
}

/** What an API error carries besides its message. */
export interface TelegramApiErrorDetails {
  /** The Bot API method called. */
  readonly method: string;
  /** `error_code` from the response (the HTTP status when the body had none). */
  readonly errorCode: number;
  /** `description` from the response. */
  readonly description: string;
  /** `parameters` from the response (`retry_after`, `migrate_to_chat_id`). */
  readonly parameters?: ResponseParameters | undefined;
}

/** Telegram answered `{ ok: false }` (other than 429, which is a {@link RetryAfterError}). */
export class TelegramApiError extends OutboxError {
  declare readonly code: "ERR_TELEGRAM_API" | "ERR_CHAT_MIGRATED" | "ERR_FORBIDDEN";
  /** The Bot API method called. */
  readonly method: string;
  /** `error_code` from the response. */
  readonly errorCode: number;
  /** `description` from the response. */
  readonly description: string;
  /** `parameters` from the response. */
  readonly parameters: ResponseParameters;

  constructor(
    details: TelegramApiErrorDetails,
    code: "ERR_TELEGRAM_API" | "ERR_CHAT_MIGRATED" | "ERR_FORBIDDEN" = "ERR_TELEGRAM_API",
  ) {
    super(code, `${details.method} failed: ${details.errorCode} ${details.description}`);
    this.name = "TelegramApiError";
    this.method = details.method;
    this.errorCode = details.errorCode;
    this.description = details.description;
    this.parameters = Object.freeze({ ...details.parameters });
  }
}

/** The group was upgraded to a supergroup: resend to `migrateToChatId`. */
export class ChatMigratedError extends TelegramApiError {
  declare readonly code: "ERR_CHAT_MIGRATED";
  /** The supergroup's chat id. */
  readonly migrateToChatId: number;

  constructor(details: TelegramApiErrorDetails, migrateToChatId: number) {
    super(details, "ERR_CHAT_MIGRATED");
    this.name = "ChatMigratedError";
    this.migrateToChatId = migrateToChatId;
  }
}

/**
 * A 403: the bot may not write to this chat (blocked by the user, kicked from the group, user
 * deactivated). Every op still pending for the chat fails with the same error.
 */
export class ForbiddenError extends TelegramApiError {
  declare readonly code: "ERR_FORBIDDEN";
  /** Whether Telegram said the user blocked the bot. */
  readonly isBlockedByUser: boolean;

  constructor(details: TelegramApiErrorDetails) {
    super(details, "ERR_FORBIDDEN");
    this.name = "ForbiddenError";
    this.isBlockedByUser = /bot was blocked/i.test(details.description);
  }
}

/** Why a request failed below the Bot API. */
export type NetworkFailure =
  /** No connection could be made (refused, DNS, TLS): the request never left. */
  | "connect"
  /** The per-request timeout fired. */
  | "timeout"
  /** The connection broke after it was made. */
  | "connection-lost"
  /** The server answered something that is not a Bot API envelope. */
  | "bad-response";

/** Details of a {@link NetworkError}. */
export interface NetworkErrorDetails extends ErrorOptions {
  readonly method: string;
  readonly failure: NetworkFailure;
  readonly mayHaveReachedServer: boolean;
  readonly statusCode?: number | undefined;
}

/**
 * The request failed in transport. `mayHaveReachedServer` says whether Telegram may have acted on
 * it: when true, a send is reported as maybe-delivered and never resent.
 */
export class NetworkError extends OutboxError {
  declare readonly code: "ERR_NETWORK";
  /** The Bot API method called. */
  readonly method: string;
  /** What went wrong. */
  readonly failure: NetworkFailure;
  /** False only when the request provably never left (e.g. connection refused). */
  readonly mayHaveReachedServer: boolean;
  /** The HTTP status, for `bad-response`. */
  readonly statusCode: number | undefined;

  constructor(message: string, details: NetworkErrorDetails) {
    super("ERR_NETWORK", message, details);
    this.name = "NetworkError";
    this.method = details.method;
    this.failure = details.failure;
    this.mayHaveReachedServer = details.mayHaveReachedServer;
    this.statusCode = details.statusCode;
  }
}

// `instanceof` by brand: it holds for an error from another installed copy of this package.
brandErrors("@telepace/outbox", {
  OutboxError,
  RetryAfterError,
  RetryAfterTooLongError,
  TelegramApiError,
  ChatMigratedError,
  ForbiddenError,
  NetworkError,
});

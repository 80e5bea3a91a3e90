// The error family of @telepace/client: failures only the HTTP client can have. The failures the
// outbox classifies (API errors, 429s, network errors) are `OutboxError`s of `@telepace/outbox`,
// which this package depends on and re-exports.

import { brandErrors } from "@telepace/core";

/** Stable codes of {@link ClientError}. Match on these, never on `message`. */
export type ClientErrorCode =
  | "ERR_TEXT_TOO_LONG"
  | "ERR_UPLOAD_NOT_REPEATABLE"
  | "ERR_READ_RETRY_LIMIT"
  | "ERR_UNEXPECTED_NOT_MODIFIED";

/** Base class of every error @telepace/client creates besides the outbox's. */
export class ClientError extends Error {
  /** Stable machine-readable code. */
  readonly code: ClientErrorCode;

  constructor(code: ClientErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ClientError";
    this.code = code;
  }
}

/** A text or caption longer than Telegram accepts, caught before any request. */
export class TextTooLongError extends ClientError {
  declare readonly code: "ERR_TEXT_TOO_LONG";
  /** Which parameter was too long. */
  readonly field: "text" | "caption";
  /** Its length in UTF-16 code units. */
  readonly length: number;
  /** The limit it exceeded. */
  readonly limit: number;

  constructor(field: "text" | "caption", length: number, limit: number) {
    super(
      "ERR_TEXT_TOO_LONG",
      `Expected \`${field}\` to be at most ${limit} UTF-16 code units, got ${length}`,
    );
    this.name = "TextTooLongError";
    this.field = field;
    this.length = length;
    this.limit = limit;
  }
}

/** Why a read gave up on its 429s. */
export type ReadRetryLimit = "maxReadRetries" | "maxReadRetryWaitMs";

/** Details of a {@link ReadRetryLimitError}. */
export interface ReadRetryLimitDetails extends ErrorOptions {
  readonly method: string;
  readonly limit: ReadRetryLimit;
  readonly retries: number;
  readonly waitedMs: number;
  readonly retryAfterMs: number;
}

/**
 * A read (getMe, getUpdates, getFile, a download) kept getting 429s: it slept out `retries` of
 * them (`waitedMs` in all) and stopped at `maxReadRetries` or `maxReadRetryWaitMs` instead of
 * retrying without end. `cause` is the last `RetryAfterError`.
 */
export class ReadRetryLimitError extends ClientError {
  declare readonly code: "ERR_READ_RETRY_LIMIT";
  /** The Bot API method (`downloadFile` for a download). */
  readonly method: string;
  /** The option whose bound was reached. */
  readonly limit: ReadRetryLimit;
  /** 429s slept out before giving up. */
  readonly retries: number;
  /** Milliseconds slept in all. */
  readonly waitedMs: number;
  /** What the last 429 asked for, in milliseconds. */
  readonly retryAfterMs: number;

  constructor(details: ReadRetryLimitDetails) {
    super(
      "ERR_READ_RETRY_LIMIT",
      `${details.method}: still rate limited after ${details.retries} retries (${details.waitedMs} ms slept); stopped at ${details.limit}`,
      details,
    );
    this.name = "ReadRetryLimitError";
    this.method = details.method;
    this.limit = details.limit;
    this.retries = details.retries;
    this.waitedMs = details.waitedMs;
    this.retryAfterMs = details.retryAfterMs;
  }
}

// `instanceof` by brand: it holds for an error from another installed copy of this package.
brandErrors("@telepace/client", { ClientError, TextTooLongError, ReadRetryLimitError });

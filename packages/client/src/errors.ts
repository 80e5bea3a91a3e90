// The error family of @telepace/client: failures only the HTTP client can have. The failures the
// outbox classifies (API errors, 429s, network errors) are `OutboxError`s of `@telepace/outbox`,
// which this package depends on and re-exports.

/** Stable codes of {@link ClientError}. Match on these, never on `message`. */
export type ClientErrorCode = "ERR_TEXT_TOO_LONG" | "ERR_UPLOAD_NOT_REPEATABLE";

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

// How the intake reads an error thrown by the getUpdates function it was given, without importing
// any HTTP client: a small duck-typed contract that telepace's and grammY's errors both meet.

/**
 * The fields the intake reads from whatever `getUpdates` throws. Every field is optional; an
 * error with none of them is a transient failure (retried with backoff).
 *
 * - `error_code` (grammY's `GrammyError`, a raw Bot API envelope) or `errorCode` (telepace's
 *   `TelegramApiError`): Telegram's error code. 409 stops polling (`ERR_POLLING_CONFLICT`), 401
 *   and 404 stop it too (`ERR_POLLING_UNAUTHORIZED`), 429 is a rate limit.
 * - `retryAfterMs` (telepace's `RetryAfterError`, `RetryAfterTooLongError`): how long to wait, in
 *   milliseconds; its presence alone marks a rate limit.
 * - `parameters.retry_after` (grammY, the envelope): the same in seconds.
 * - `code`: a short machine code (`"ERR_NETWORK"`, `"ECONNRESET"`), logged as is when it looks
 *   like one. The message is never read or logged: a transport's message may carry the bot
 *   token in a URL.
 */
export interface GetUpdatesErrorFields {
  readonly error_code?: number;
  readonly errorCode?: number;
  readonly retryAfterMs?: number;
  readonly parameters?: { readonly retry_after?: number };
  readonly code?: string;
}

/** What a getUpdates failure means for the polling loop. */
export type PollingFailure =
  | { readonly kind: "rate-limited"; readonly retryAfterMs: number | undefined }
  | { readonly kind: "stop"; readonly errorCode: number }
  | {
      readonly kind: "transient";
      readonly errorCode: number | undefined;
      readonly code: string | undefined;
    };

const STOP_CODES: ReadonlySet<number> = new Set([401, 404, 409]);
const SAFE_CODE = /^[A-Za-z0-9_]{1,40}$/;

/** Reads a property without trusting the object: a throwing getter reads as `undefined`. */
function read(value: unknown, key: string): unknown {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) {
    return undefined;
  }
  try {
    return (value as Readonly<Record<string, unknown>>)[key];
  } catch {
    return undefined;
  }
}

function finiteAtLeastZero(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Classifies what `getUpdates` threw (see {@link GetUpdatesErrorFields}). */
export function classifyPollingFailure(error: unknown): PollingFailure {
  const errorCode = [read(error, "error_code"), read(error, "errorCode")].find(
    (value): value is number => Number.isSafeInteger(value),
  );
  if (errorCode !== undefined && STOP_CODES.has(errorCode)) return { kind: "stop", errorCode };
  const retryAfterMs = finiteAtLeastZero(read(error, "retryAfterMs"));
  const retryAfterS = finiteAtLeastZero(read(read(error, "parameters"), "retry_after"));
  if (errorCode === 429 || retryAfterMs !== undefined || retryAfterS !== undefined) {
    return {
      kind: "rate-limited",
      retryAfterMs: retryAfterMs ?? (retryAfterS === undefined ? undefined : retryAfterS * 1000),
    };
  }
  const code = read(error, "code");
  return {
    kind: "transient",
    errorCode,
    code: typeof code === "string" && SAFE_CODE.test(code) ? code : undefined,
  };
}

/** The short machine code of any error (`ERR_JOURNAL_IO`, `ECONNRESET`), safe to log, if it has one. */
export function safeCodeOf(error: unknown): string | undefined {
  const failure = classifyPollingFailure(error);
  return failure.kind === "transient" ? failure.code : undefined;
}

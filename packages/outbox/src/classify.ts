// Failure classification: what the outbox does when an op's execute throws. The default
// understands telepace's errors and error objects shaped like Bot API errors.

import { NetworkError, TelegramApiError } from "./errors.js";
import { retryAfterFrom } from "./retry-after.js";

/** What the outbox does with a failed attempt. */
export type FailureVerdict =
  /** Freeze the op's chat (every chat when it has none) and requeue the op in its place. */
  | { readonly action: "rate-limited"; readonly retryAfterMs: number }
  /** The edit changed nothing: deliver with `notModified: true`. */
  | { readonly action: "not-modified" }
  /**
   * Transient: back off (per chat) and retry in place. `maybeDelivered` says whether this attempt
   * may have reached Telegram, reported if the op runs out of attempts.
   */
  | { readonly action: "retry"; readonly maybeDelivered: boolean }
  /** Give up. `scope: "chat"` fails every pending op of the chat too (blocked, migrated). */
  | {
      readonly action: "fail";
      readonly scope: "op" | "chat";
      readonly maybeDelivered: boolean;
    };

/** What the classifier knows about the op. */
export interface FailureContext {
  /** The op's `idempotent` flag. */
  readonly idempotent: boolean;
}

/** A function deciding what a failure means; see {@link classifyFailure}. */
export type FailureClassifier = (error: unknown, context: FailureContext) => FailureVerdict;

const NOT_MODIFIED = /message is not modified/i;

function field(error: unknown, name: string): unknown {
  return typeof error === "object" && error !== null
    ? (error as Record<string, unknown>)[name]
    : undefined;
}

function errorCodeOf(error: unknown): number | undefined {
  if (error instanceof TelegramApiError) return error.errorCode;
  const code = field(error, "error_code");
  return typeof code === "number" ? code : undefined;
}

/**
 * The default {@link FailureClassifier}:
 * - a 429 in any shape ({@link retryAfterFrom}) → `rate-limited`;
 * - a description containing "message is not modified" → `not-modified`;
 * - a {@link NetworkError} that never reached the server → `retry`; one that may have → `retry`
 *   when the op is idempotent, else `fail` with `maybeDelivered`;
 * - a 5xx → like a network error that may have reached the server;
 * - 403 or `migrate_to_chat_id` → `fail` for the whole chat;
 * - anything else → `fail`.
 */
export function classifyFailure(error: unknown, context: FailureContext): FailureVerdict {
  const rateLimited = retryAfterFrom(error);
  if (rateLimited !== undefined) {
    return { action: "rate-limited", retryAfterMs: rateLimited.retryAfterMs };
  }
  const description = field(error, "description");
  if (typeof description === "string" && NOT_MODIFIED.test(description)) {
    return { action: "not-modified" };
  }
  if (error instanceof NetworkError) {
    const maybeDelivered = error.mayHaveReachedServer;
    if (!maybeDelivered || context.idempotent) return { action: "retry", maybeDelivered };
    return { action: "fail", scope: "op", maybeDelivered };
  }
  const errorCode = errorCodeOf(error);
  if (errorCode !== undefined && errorCode >= 500) {
    if (context.idempotent) return { action: "retry", maybeDelivered: true };
    return { action: "fail", scope: "op", maybeDelivered: true };
  }
  const parameters = field(error, "parameters");
  if (errorCode === 403 || field(parameters, "migrate_to_chat_id") !== undefined) {
    return { action: "fail", scope: "chat", maybeDelivered: false };
  }
  return { action: "fail", scope: "op", maybeDelivered: false };
}

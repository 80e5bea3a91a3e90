// What a failed attempt leads to, as a pure decision: how the chat is held (a 429 freeze, a
// transient backoff) and what becomes of the op (requeued in its place, settled, or failed along
// with its chat or with everything pending). The outbox carries the decision out.

import type { FailureVerdict } from "./classify.js";
import { RetryAfterTooLongError } from "./errors.js";
import type { OutboxOutcome } from "./outcome.js";

/** The limits of {@link TelegramOutboxOptions} the policy applies. */
export interface RetryLimits {
  readonly maxAttempts: number;
  readonly maxRetryAfterMs: number;
  readonly retryBaseDelayMs: number;
  readonly retryMaxDelayMs: number;
}

/** What is known about the failed attempt when it is decided on. */
export interface FailedAttempt {
  /** What the classifier made of the failure. */
  readonly verdict: FailureVerdict;
  readonly error: unknown;
  /** Attempts so far, this one included. */
  readonly attempts: number;
  /** Whether the op already settled while in flight (its caller aborted it). */
  readonly isSettled: boolean;
  /** Whether a newer op with the same key is pending: this payload is not retried. */
  readonly isSuperseded: boolean;
  /** Whether the outbox still sends what is pending (open, or closing with drain). */
  readonly isSending: boolean;
  /** Whether the op writes to a chat (a chat-less 429 freezes every chat). */
  readonly hasChat: boolean;
  /** Transient failures of the chat in a row before this one. */
  readonly transientFailures: number;
}

/** How the op's chat (or every chat) is held before anything of it is asked for again. */
export type Hold =
  | { readonly kind: "none" }
  /** The chat's run of transient failures is over (a backoff already set still runs out). */
  | { readonly kind: "reset-failures" }
  /** A 429: freeze the chat, or every chat for `scope: "global"`, for `retryAfterMs`. */
  | { readonly kind: "freeze"; readonly scope: "chat" | "global"; readonly retryAfterMs: number }
  /** A transient failure: the chat's `transientFailures`-th in a row, backing off `delayMs`. */
  | { readonly kind: "backoff"; readonly transientFailures: number; readonly delayMs: number };

/** What becomes of the op. */
export type OpDecision =
  /** Nothing: it already settled. */
  | { readonly action: "none" }
  /** Back in its place in line, to be tried again after the hold. */
  | {
      readonly action: "requeue";
      readonly reason: "rate-limited" | "transient";
      readonly delayMs: number;
    }
  /** Settle it with this outcome. */
  | { readonly action: "settle"; readonly outcome: OutboxOutcome<unknown> }
  /**
   * Fail it with `error` (a no-op when it already settled), and with `scope: "chat"` every pending
   * op of its chat, with `scope: "all"` every pending op, as not delivered.
   */
  | {
      readonly action: "fail";
      readonly scope: "op" | "chat" | "all";
      readonly error: unknown;
      readonly maybeDelivered: boolean;
    };

/** A failed attempt's {@link Hold} and {@link OpDecision}. */
export interface RetryDecision {
  readonly hold: Hold;
  readonly op: OpDecision;
}

const NONE: OpDecision = Object.freeze({ action: "none" });

/**
 * Decides what a failed attempt leads to. Pure: the same attempt and limits always give the same
 * decision, and nothing is changed.
 *
 * @example
 * decideRetry(
 *   { verdict: { action: "retry", maybeDelivered: false }, error, attempts: 1, isSettled: false,
 *     isSuperseded: false, isSending: true, hasChat: true, transientFailures: 0 },
 *   { maxAttempts: 10, maxRetryAfterMs: 300_000, retryBaseDelayMs: 1000, retryMaxDelayMs: 30_000 },
 * );
 * // { hold: { kind: "backoff", transientFailures: 1, delayMs: 1000 },
 * //   op: { action: "requeue", reason: "transient", delayMs: 1000 } }
 */
export function decideRetry(attempt: FailedAttempt, limits: RetryLimits): RetryDecision {
  const { verdict } = attempt;
  switch (verdict.action) {
    case "rate-limited": {
      const { retryAfterMs } = verdict;
      const scope = attempt.hasChat ? "chat" : "global";
      const hold: Hold = { kind: "freeze", scope, retryAfterMs };
      if (attempt.isSettled) return { hold, op: NONE };
      if (retryAfterMs > limits.maxRetryAfterMs) {
        const error = new RetryAfterTooLongError(retryAfterMs, limits.maxRetryAfterMs, {
          cause: attempt.error,
        });
        // Everything else behind the same freeze would wait just as long.
        const failScope = scope === "chat" ? "chat" : "all";
        return { hold, op: { action: "fail", scope: failScope, error, maybeDelivered: false } };
      }
      return { hold, op: retryOrSettle(attempt, limits, "rate-limited", retryAfterMs, false) };
    }
    case "not-modified":
      return {
        hold: { kind: "reset-failures" },
        op: attempt.isSettled
          ? NONE
          : {
              action: "settle",
              outcome: {
                status: "delivered",
                result: undefined,
                notModified: true,
                attempts: attempt.attempts,
              },
            },
      };
    case "retry": {
      const transientFailures = attempt.transientFailures + 1;
      const delayMs = Math.min(
        limits.retryMaxDelayMs,
        limits.retryBaseDelayMs * 2 ** (transientFailures - 1),
      );
      return {
        hold: { kind: "backoff", transientFailures, delayMs },
        op: attempt.isSettled
          ? NONE
          : retryOrSettle(attempt, limits, "transient", delayMs, verdict.maybeDelivered),
      };
    }
    case "fail":
      return {
        hold: { kind: "none" },
        op: {
          action: "fail",
          scope: verdict.scope,
          error: attempt.error,
          maybeDelivered: verdict.maybeDelivered,
        },
      };
  }
}

/**
 * Requeues the op in its place — unless the outbox stopped sending, a newer op took its key, or it
 * is out of attempts.
 */
function retryOrSettle(
  attempt: FailedAttempt,
  limits: RetryLimits,
  reason: "rate-limited" | "transient",
  delayMs: number,
  maybeDelivered: boolean,
): OpDecision {
  const { attempts } = attempt;
  if (!attempt.isSending) {
    return { action: "settle", outcome: { status: "closed", attempts } };
  }
  if (attempt.isSuperseded) {
    // A newer op for the key arrived meanwhile, so this payload is not retried.
    return { action: "settle", outcome: { status: "superseded", reason: "coalesced", attempts } };
  }
  if (attempts >= limits.maxAttempts) {
    return { action: "fail", scope: "op", error: attempt.error, maybeDelivered };
  }
  return { action: "requeue", reason, delayMs };
}

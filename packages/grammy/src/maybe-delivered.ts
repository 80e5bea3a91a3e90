// What a write becomes when it may have reached Telegram but was not confirmed (a 5xx, a
// connection lost after sending): the Bot API has no idempotency key, so the choice is between a
// possible duplicate and a possible gap, and it is the bot's to make.

import { describeValue } from "@telepace/core";
import { classifyFailure, type FailureClassifier, type OutboxOutcome } from "@telepace/outbox";

/**
 * - `throw`: the call rejects with Telegram's answer (`GrammyError`) or the `HttpError`, and
 *   nothing is sent again: never a silent duplicate, but a handler without `try`/`catch` stops.
 * - `resend`: sent again with backoff, as auto-retry does (up to `maxAttempts`): the handler goes
 *   on; the message may show twice.
 * - `resolve`: the call resolves `true` ("delivery unknown") and nothing is sent again: the
 *   handler goes on; the message may be missing. For sends whose result the handler ignores.
 */
export type MaybeDeliveredPolicy = "throw" | "resend" | "resolve";

const POLICIES: readonly MaybeDeliveredPolicy[] = ["throw", "resend", "resolve"];

/**
 * The `maybeDelivered` option, checked.
 * @throws {TypeError} naming the option and the values it takes.
 */
export function checkMaybeDelivered(value: unknown): MaybeDeliveredPolicy {
  if (value === undefined) return "throw";
  if (POLICIES.includes(value as MaybeDeliveredPolicy)) return value as MaybeDeliveredPolicy;
  throw new TypeError(
    `Expected \`maybeDelivered\` to be "throw", "resend" or "resolve", got ${describeValue(value)}`,
  );
}

/**
 * A classifier that retries what `inner` gives up on because it may have been delivered (a
 * write that is not idempotent), as auto-retry does; everything else as `inner` says.
 */
export function resending(inner: FailureClassifier = classifyFailure): FailureClassifier {
  return (error, context) => {
    const verdict = inner(error, context);
    return verdict.action === "fail" && verdict.scope === "op" && verdict.maybeDelivered
      ? { action: "retry", maybeDelivered: true }
      : verdict;
  };
}

/** Whether the policy answers this outcome `true` instead of the failure. */
export function resolvesAsUnknown(
  policy: MaybeDeliveredPolicy,
  outcome: OutboxOutcome<unknown>,
): boolean {
  return policy === "resolve" && outcome.status === "failed" && outcome.maybeDelivered;
}

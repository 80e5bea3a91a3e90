// An outbox outcome as grammY expects a transformer's answer: an `ApiResponse` envelope (so an API
// failure stays a `GrammyError`), the original `HttpError`, or an `OutboxError` for what only the
// outbox can say (closed, full).

import { OutboxError, type OutboxOutcome, RetryAfterTooLongError } from "@telepace/outbox";
import { grammyFailureOf } from "./failures.js";

/** What a transformer resolves with: grammY's `ApiResponse`. */
export type Envelope =
  | { readonly ok: true; readonly result: unknown }
  | {
      readonly ok: false;
      readonly error_code: number;
      readonly description: string;
      readonly parameters?: object | undefined;
    };

/**
 * "Nothing new to show": the answer to an edit Telegram found unchanged ("message is not
 * modified") and to an op a newer one replaced (a coalesced edit, an edit a delete dropped, a chat
 * action a newer one replaced). `true` is a valid result of every method that can get it.
 */
const NOTHING_TO_SHOW: Envelope = Object.freeze({ ok: true, result: true });

function tooLongEnvelope(error: RetryAfterTooLongError): Envelope {
  const seconds = Math.ceil(error.retryAfterMs / 1000);
  return Object.freeze({
    ok: false,
    error_code: 429,
    description: `Too Many Requests: retry after ${seconds}`,
    parameters: Object.freeze({ retry_after: seconds }),
  });
}

/**
 * Maps an outcome to the transformer's answer, or throws what grammY would have thrown (an
 * `HttpError`) or an {@link OutboxError} (`ERR_OUTBOX_CLOSED`, `ERR_OUTBOX_FULL`).
 */
export function responseOf(outcome: OutboxOutcome<unknown>): Envelope {
  switch (outcome.status) {
    case "delivered":
      return outcome.notModified ? NOTHING_TO_SHOW : (outcome.result as Envelope);
    case "superseded":
      return NOTHING_TO_SHOW;
    case "failed": {
      const original = grammyFailureOf(outcome.error);
      if (original instanceof Error) throw original;
      if (original !== undefined) return original;
      if (outcome.error instanceof RetryAfterTooLongError) return tooLongEnvelope(outcome.error);
      throw outcome.error;
    }
    case "rejected":
      throw outcome.error;
    case "closed":
      throw new OutboxError("ERR_OUTBOX_CLOSED", "The outbox closed before the call was made");
  }
}

// How a streamed message ended, as a discriminated union: every message it left in the chat, how
// it was shown while it grew, and whether the person stopped it.

import type { Message } from "@grammyjs/types";
import { OutboxError } from "../errors.js";
import type { OutboxOutcome } from "../outcome.js";

/** How the text was shown while it grew. */
export type StreamMode = "draft" | "edit";

/** What every {@link StreamOutcome} carries. */
export interface StreamOutcomeBase {
  /** The messages now in the chat, in order: more than one when the text passed the limit. */
  readonly messages: readonly Message.TextMessage[];
  /** `draft` frames (private chats), or `edit`s of a progress message. */
  readonly mode: StreamMode;
  /** Whether the person pressed Stop (the text so far became the final). */
  readonly stopped: boolean;
  /** Draft frames Telegram accepted. */
  readonly draftFrames: number;
  /** Progress edits Telegram accepted. */
  readonly edits: number;
  /** What the source threw, when it failed: the text so far became the final. */
  readonly sourceError?: unknown;
}

/** Every message of the text was delivered. */
export interface StreamDelivered extends StreamOutcomeBase {
  readonly status: "delivered";
}

/**
 * The text had nothing to show (it was empty or only whitespace, which Telegram refuses as a
 * message): no message was sent, and a progress message the stream had shown was deleted.
 */
export interface StreamEmpty extends StreamOutcomeBase {
  readonly status: "empty";
}

/** A final message could not be delivered. */
export interface StreamFailed extends StreamOutcomeBase {
  readonly status: "failed";
  /** The last failure (an `OutboxError` for the client's streams). */
  readonly error: unknown;
  /** Whether the failed message may have reached Telegram after all. */
  readonly maybeDelivered: boolean;
}

/** The outbox closed before the final message was delivered. */
export interface StreamClosed extends StreamOutcomeBase {
  readonly status: "closed";
}

/** The single outcome of a streamed message. */
export type StreamOutcome = StreamDelivered | StreamEmpty | StreamFailed | StreamClosed;

/**
 * The outcome of a stream that ended on `failure`: an outbox outcome that was not delivered, or
 * what was thrown (closed when the outbox closed).
 */
export function failureOutcome(failure: unknown, base: StreamOutcomeBase): StreamOutcome {
  const isOutcome =
    typeof failure === "object" && failure !== null && "status" in failure && "attempts" in failure;
  const outcome = isOutcome ? (failure as OutboxOutcome<unknown>) : undefined;
  const closed =
    outcome?.status === "closed" ||
    (failure instanceof OutboxError && failure.code === "ERR_OUTBOX_CLOSED");
  if (closed) return Object.freeze({ status: "closed", ...base });
  return Object.freeze({
    status: "failed",
    error: outcome === undefined ? failure : "error" in outcome ? outcome.error : failure,
    maybeDelivered: outcome?.status === "failed" && outcome.maybeDelivered,
    ...base,
  });
}

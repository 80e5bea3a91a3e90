// Outcomes: every op settles as exactly one of these, never as a bare `undefined`.

import { OutboxError } from "./errors.js";

/** The op ran and Telegram accepted it. */
export interface OutboxDelivered<T> {
  readonly status: "delivered";
  /** The API result. */
  readonly result: T;
  /** False: the request changed something. */
  readonly notModified: false;
  /** How many times the request was sent. */
  readonly attempts: number;
  /** The outcome of the op `followUp` enqueued, when it enqueued one. */
  readonly followUp?: Promise<OutboxOutcome<unknown>> | undefined;
}

/** An edit that Telegram answered with "message is not modified": it is delivered. */
export interface OutboxNotModified {
  readonly status: "delivered";
  /** There is no API result for an unchanged message. */
  readonly result: undefined;
  readonly notModified: true;
  readonly attempts: number;
}

/** A newer op made this one pointless before it was sent (again). */
export interface OutboxSuperseded {
  readonly status: "superseded";
  /**
   * `coalesced`: a newer op with the same key replaced it. `dropped`: an op that
   * `supersedes` its key (a delete, a replace-progress send) removed it.
   */
  readonly reason: "coalesced" | "dropped";
  /** How many times it had been sent before (a 429-requeued op can be superseded too). */
  readonly attempts: number;
}

/** The op failed for good. */
export interface OutboxFailed<E = unknown> {
  readonly status: "failed";
  /** Why; for ops of the TelegramClient always an {@link OutboxError}. */
  readonly error: E;
  readonly attempts: number;
  /**
   * True when the last request may have reached Telegram (a connection lost or timed out after
   * sending, a 5xx): a send may have been delivered and was not resent.
   */
  readonly maybeDelivered: boolean;
}

/** The outbox closed before the op could be delivered. */
export interface OutboxClosed {
  readonly status: "closed";
  readonly attempts: number;
}

/** The outbox was full (`maxPending` or `maxPendingPerChat`); the op was never queued. */
export interface OutboxRejected {
  readonly status: "rejected";
  /** An {@link OutboxError} with code `ERR_OUTBOX_FULL`. */
  readonly error: OutboxError;
}

/** The single outcome of an op. */
export type OutboxOutcome<T, E = unknown> =
  | OutboxDelivered<T>
  | OutboxNotModified
  | OutboxSuperseded
  | OutboxFailed<E>
  | OutboxClosed
  | OutboxRejected;

/**
 * The result of a delivered outcome, or a throw: the failure's error, or an {@link OutboxError}
 * (`ERR_SUPERSEDED`, `ERR_OUTBOX_CLOSED`, `ERR_OUTBOX_FULL`). For "not modified" it returns
 * `undefined`.
 *
 * @example
 * const message = unwrapOutcome(await client.sendMessage(chatId, "done"));
 */
export function unwrapOutcome<T>(outcome: OutboxOutcome<T>): T | undefined {
  switch (outcome.status) {
    case "delivered":
      return outcome.result;
    case "failed":
      throw outcome.error;
    case "rejected":
      throw outcome.error;
    case "superseded":
      throw new OutboxError("ERR_SUPERSEDED", `The op was superseded (${outcome.reason})`);
    case "closed":
      throw new OutboxError("ERR_OUTBOX_CLOSED", "The outbox closed before the op was delivered");
  }
}

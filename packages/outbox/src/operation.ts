// What the outbox schedules: a keyed, prioritised unit of work with an `execute(signal)`, so any
// transport (our TelegramClient, a grammY transformer, a test double) can sit underneath.

import { checkNumber } from "@telepace/core";
import { type ChatId, chatKeyOf } from "./chat.js";

/**
 * The priority tiers of a single-worker outbox: lower runs first. Any integer >= 0 is accepted; these are the ones
 * the client uses.
 */
export const Priority = Object.freeze({
  /** Messages the user waits for. */
  send: 0,
  /** Deletes (they also drop the pending edits of their message). */
  delete: 1,
  /** Progress edits, coalesced per message. */
  edit: 2,
});

/** One unit of work for the outbox. */
export interface OutboxOperation<T> {
  /**
   * The coalescing key within the chat: while an op with the same chat and key is still pending,
   * a newer one replaces it (and keeps its place in line). Omit it for an op that must never be
   * coalesced, such as a plain send.
   * @example writeKeys.edit(messageId) // "edit:<messageId>"; see writeKeys
   */
  readonly key?: string | undefined;
  /**
   * The chat the request writes to: the op is paced, ordered and frozen with that chat. Without a
   * chat the op is paced by the global budget only, and a 429 on it freezes every chat.
   */
  readonly chatId?: ChatId | undefined;
  /** Lower runs first; see {@link Priority}. Range: integer >= 0. @defaultValue 0 */
  readonly priority?: number | undefined;
  /**
   * Whether repeating the request is harmless (edits, deletes, chat actions). Transient failures
   * after which the request may have reached Telegram are retried only when this is true;
   * otherwise the op fails as maybe-delivered. @defaultValue false
   */
  readonly idempotent?: boolean | undefined;
  /**
   * Whether the request uses a slot of the chat's pacing. Set false for requests Telegram does
   * not count as messages (chat actions): they still keep the chat's order and freezes.
   * @defaultValue true
   */
  readonly paced?: boolean | undefined;
  /**
   * Keys (in the same chat) of pending ops this op makes pointless; they are dropped with a
   * `superseded` outcome when this op is enqueued. A delete supersedes its message's edit.
   */
  readonly supersedes?: readonly string[] | undefined;
  /**
   * Performs the request. Resolve with the result; throw (or return a 429 envelope) to fail.
   * `signal` aborts when the caller aborts or `close()` runs out of time.
   */
  readonly execute: (signal: AbortSignal) => Promise<T>;
  /**
   * Called with the result once the op is delivered; the op it returns is enqueued at once, even
   * while the outbox drains. Replace-progress uses it to delete the progress message only after
   * the final message was sent.
   */
  followUp?(result: T): OutboxOperation<unknown> | undefined;
}

/** Options of {@link TelegramOutbox.enqueue}. */
export interface EnqueueOptions {
  /**
   * Aborting removes a pending op (or aborts the in-flight request) and rejects the outcome
   * promise with `signal.reason`.
   */
  readonly signal?: AbortSignal | undefined;
}

/** An op whose fields were checked, with its priority and its chat's pacing key. */
export interface CheckedOperation {
  readonly op: OutboxOperation<unknown>;
  readonly priority: number;
  readonly chatKey: string | undefined;
}

/**
 * Checks an op's fields.
 *
 * @throws {TypeError|RangeError} naming the field, when the op is malformed.
 */
export function checkOperation(op: OutboxOperation<unknown>): CheckedOperation {
  if (typeof op !== "object" || op === null || typeof op.execute !== "function") {
    throw new TypeError("Expected `op` to be an object with an `execute` function");
  }
  const priority = checkNumber("priority", op.priority ?? 0, { integer: true, min: 0 });
  if (op.key !== undefined && typeof op.key !== "string") {
    throw new TypeError(`Expected \`key\` to be a string, got ${typeof op.key}`);
  }
  for (const name of ["idempotent", "paced"] as const) {
    if (op[name] !== undefined && typeof op[name] !== "boolean") {
      throw new TypeError(`Expected \`${name}\` to be a boolean, got ${typeof op[name]}`);
    }
  }
  if (
    op.supersedes !== undefined &&
    (!Array.isArray(op.supersedes) || op.supersedes.some((key) => typeof key !== "string"))
  ) {
    throw new TypeError("Expected `supersedes` to be an array of strings");
  }
  if (op.followUp !== undefined && typeof op.followUp !== "function") {
    throw new TypeError(`Expected \`followUp\` to be a function, got ${typeof op.followUp}`);
  }
  const chatKey = op.chatId === undefined ? undefined : chatKeyOf(op.chatId);
  return { op, priority, chatKey };
}

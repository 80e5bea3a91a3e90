// What became of each recipient, as the store records it (a short code per position) and as a
// broadcast counts it; and how a send's outbox outcome maps onto it.

import {
  ChatMigratedError,
  ForbiddenError,
  type OutboxOutcome,
  TelegramApiError,
} from "@telepace/outbox";

/**
 * The outcome of one recipient:
 * - `sent`: Telegram accepted the message;
 * - `blocked`: 403, the user blocked the bot; `deactivated`: 403, the account is deleted;
 *   `forbidden`: another 403 (kicked from the group, never started the bot);
 * - `chat-not-found`: 400, the chat does not exist (or the bot cannot see it);
 * - `maybe-delivered`: the request may have reached Telegram but no answer said so (a 5xx, a
 *   connection lost after sending), so it was not sent again;
 * - `failed`: anything else (a bad message, a 429 longer than the outbox waits, a value in the
 *   source that is no chat id).
 */
export type RecipientOutcome =
  | "sent"
  | "blocked"
  | "deactivated"
  | "forbidden"
  | "chat-not-found"
  | "maybe-delivered"
  | "failed";

/** Counts of a broadcast's recipients by outcome, and of two facts beside the outcome. */
export interface BroadcastCounts {
  readonly sent: number;
  readonly blocked: number;
  readonly deactivated: number;
  readonly forbidden: number;
  readonly chatNotFound: number;
  readonly maybeDelivered: number;
  readonly failed: number;
  /** Recipients reached at the supergroup their group had become (`migrate_to_chat_id`). */
  readonly migrated: number;
  /**
   * Recipients whose send was in flight when a process died and that were sent again (they may
   * have the message twice): the only repeats a broadcast makes.
   */
  readonly resentAfterCrash: number;
}

/** A mutable {@link BroadcastCounts}. */
export type MutableCounts = { -readonly [K in keyof BroadcastCounts]: number };

const FIELD_OF: Readonly<Record<RecipientOutcome, keyof BroadcastCounts>> = {
  sent: "sent",
  blocked: "blocked",
  deactivated: "deactivated",
  forbidden: "forbidden",
  "chat-not-found": "chatNotFound",
  "maybe-delivered": "maybeDelivered",
  failed: "failed",
};

/** Every outcome code, for validation. */
export const RECIPIENT_OUTCOMES = Object.freeze(Object.keys(FIELD_OF) as RecipientOutcome[]);

/** Zero of everything. */
export function zeroCounts(): MutableCounts {
  return {
    sent: 0,
    blocked: 0,
    deactivated: 0,
    forbidden: 0,
    chatNotFound: 0,
    maybeDelivered: 0,
    failed: 0,
    migrated: 0,
    resentAfterCrash: 0,
  };
}

/** Adds `more` into `into`. */
export function addCounts(into: MutableCounts, more: BroadcastCounts): void {
  for (const key of Object.keys(into) as (keyof BroadcastCounts)[]) into[key] += more[key];
}

/** How many recipients have an outcome (the two facts beside it not counted). */
export function settledOf(counts: BroadcastCounts): number {
  return RECIPIENT_OUTCOMES.reduce((sum, outcome) => sum + counts[FIELD_OF[outcome]], 0);
}

/** The outcome of a position with what else is known of it. */
export interface SettledPosition {
  readonly outcome: RecipientOutcome;
  readonly migrated: boolean;
  readonly resent: boolean;
}

/**
 * A position's record in a store: `s` while its send is started, else the outcome code with
 * `+m` when it followed a migration and `+r` when it was sent again after a crash.
 */
export type PositionRecord = string;

/** The record of a position whose send started (and may be in flight). */
export const STARTED: PositionRecord = "s";

/** The record of a settled position. */
export function encodeSettled(settled: SettledPosition): PositionRecord {
  return `${settled.outcome}${settled.migrated ? "+m" : ""}${settled.resent ? "+r" : ""}`;
}

/** A position record read back: `started`, a settled position, or `undefined` when unreadable. */
export function decodeRecord(record: unknown): "started" | SettledPosition | undefined {
  if (record === STARTED) return "started";
  if (typeof record !== "string") return undefined;
  const [outcome, ...flags] = record.split("+");
  if (!(RECIPIENT_OUTCOMES as readonly string[]).includes(outcome as string)) return undefined;
  if (flags.some((flag) => flag !== "m" && flag !== "r")) return undefined;
  return {
    outcome: outcome as RecipientOutcome,
    migrated: flags.includes("m"),
    resent: flags.includes("r"),
  };
}

/** Counts one settled position in. */
export function countSettled(into: MutableCounts, settled: SettledPosition): void {
  into[FIELD_OF[settled.outcome]]++;
  if (settled.migrated) into.migrated++;
  if (settled.resent) into.resentAfterCrash++;
}

const CHAT_NOT_FOUND = /chat not found|user not found|PEER_ID_INVALID|chat_id is empty/i;
const DEACTIVATED = /deactivated/i;

/** What a send's outbox outcome means for its recipient. */
export type SendVerdict =
  | { readonly kind: "settled"; readonly outcome: RecipientOutcome; readonly error?: unknown }
  /** The group became a supergroup: send again, there. */
  | { readonly kind: "migrate"; readonly chatId: number }
  /** Nothing reached Telegram (the outbox was full): the recipient goes back in line. */
  | { readonly kind: "again" }
  /**
   * The outbox closed: the send may have been cut off in flight. The position stays started, as
   * after a crash, for the next run to decide.
   */
  | { readonly kind: "interrupted" };

/** Classifies a send's outcome (a failure the broadcast raised itself is handled before this). */
export function verdictOf(outcome: OutboxOutcome<unknown>): SendVerdict {
  switch (outcome.status) {
    case "delivered":
      return { kind: "settled", outcome: "sent" };
    case "rejected":
    case "superseded":
      return { kind: "again" };
    case "closed":
      return { kind: "interrupted" };
    case "failed":
      break;
  }
  const { error } = outcome;
  if (error instanceof ChatMigratedError) return { kind: "migrate", chatId: error.migrateToChatId };
  if (error instanceof ForbiddenError) {
    const outcomeOf = error.isBlockedByUser
      ? "blocked"
      : DEACTIVATED.test(error.description)
        ? "deactivated"
        : "forbidden";
    return { kind: "settled", outcome: outcomeOf, error };
  }
  if (error instanceof TelegramApiError && CHAT_NOT_FOUND.test(error.description)) {
    return { kind: "settled", outcome: "chat-not-found", error };
  }
  if (outcome.maybeDelivered) return { kind: "settled", outcome: "maybe-delivered", error };
  return { kind: "settled", outcome: "failed", error };
}

// The attribute keys every telepace metric uses, and the one derived attribute: a chat's kind,
// which keeps per-chat figures to a handful of series however many chats a bot talks to.

/**
 * The attribute keys of telepace's metrics, OpenTelemetry style (Prometheus labels replace `.`
 * with `_`).
 */
export const metricAttributes = Object.freeze({
  /** {@link ChatKind} of an outbox chat. */
  chatKind: "telepace.chat.kind",
  /** An outbox chat's pacing key; only with `maxPerChatSeries`, for the busiest chats. */
  chatId: "telepace.chat.id",
  /** Where a 429 applied: `chat` or `global`. */
  rateLimitScope: "telepace.rate_limit.scope",
  /** How an op, an update or a poll ended. */
  outcome: "telepace.outcome",
  /** The dispatcher's principal kind (`private`, `group-user`, …). */
  keyKind: "telepace.key.kind",
  /** Why the dispatcher refused an update. */
  reason: "telepace.reason",
  /** `download` or `upload`. */
  direction: "telepace.media.direction",
  /** A media scheduler's data centre (an MTProto DC id or the API host). */
  dc: "telepace.media.dc",
  /** `foreground` or `background`. */
  priority: "telepace.media.priority",
  /** A broadcast's id (a few per bot at a time). */
  broadcastId: "telepace.broadcast.id",
  /** `free`, `paid` or `paid-refused`. */
  broadcastMode: "telepace.broadcast.mode",
});

/**
 * The kind of an outbox chat, from its pacing key:
 * - `private` — a user's private chat (a positive id);
 * - `group` — a basic group (a negative id without the `-100` prefix);
 * - `supergroup` — a supergroup or channel (`-100…`, or an `@username`);
 * - `none` — an op without a chat.
 */
export type ChatKind = "private" | "group" | "supergroup" | "none";

/** The {@link ChatKind} of a pacing key (see `chatKeyOf` of `@telepace/outbox`). */
export function chatKindOf(chat: string | undefined): ChatKind {
  if (chat === undefined) return "none";
  if (chat.startsWith("@") || chat.startsWith("-100")) return "supergroup";
  return chat.startsWith("-") ? "group" : "private";
}

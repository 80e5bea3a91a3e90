// Every default of @telepace/outbox in one frozen object, so docs, validation and code agree.

/**
 * The defaults of {@link TelegramOutboxOptions}: scheduling only (the HTTP client's defaults are
 * `clientDefaults` of `@telepace/client`).
 * Rates follow Telegram's Bot FAQ: about 1 message/s per private chat, 20 messages/min per group,
 * about 30 messages/s in total.
 */
export const outboxDefaults = Object.freeze({
  /** Requests per second to one private chat. */
  privateChatRps: 1,
  /** Requests per second to one group, supergroup or channel (20 per minute). */
  groupChatRps: 20 / 60,
  /** Requests per second across every chat. */
  globalRps: 30,
  /** Paid broadcast sends (`allow_paid_broadcast`) per second, a budget of their own. */
  paidBroadcastRps: 1000,
  /** Requests one group may take in a row: at most this many in any `groupBurst / groupChatRps` s. */
  groupBurst: 20,
  /** Places of a group's window that progress edits leave free for sends. */
  sendReserve: 3,
  /** Added to every sliding window (global, group), so latency jitter cannot earn a 429. */
  pacingMarginMs: 100,
  /** Chats with a request in flight at the same time. */
  maxInFlight: 32,
  /** Ops waiting in the outbox (in-flight ops not counted). */
  maxPending: 10_000,
  /** Ops waiting for one chat. */
  maxPendingPerChat: 1_000,
  /** Longest 429 `retry_after` the outbox waits out; longer waits fail the op. */
  maxRetryAfterMs: 300_000,
  /** Attempts per op (the first try included) before it fails. */
  maxAttempts: 10,
  /** First backoff after a transient failure (5xx, connection error); doubles each time. */
  retryBaseDelayMs: 1_000,
  /** Longest backoff after a transient failure. */
  retryMaxDelayMs: 30_000,
  /** The wait when a 429 carries no valid `retry_after` (a number of seconds >= 0). */
  defaultRetryAfterMs: 5_000,
  /** How long `close()` waits for pending and in-flight work. */
  closeTimeoutMs: 10_000,
});

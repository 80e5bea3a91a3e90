// Every default of @telepace/client in one frozen object, so docs, validation and code agree.
// Scheduling defaults (pacing, bounds, 429 caps of writes) are `outboxDefaults` of the outbox.

/** The defaults of {@link TelegramClientOptions}. */
export const clientDefaults = Object.freeze({
  /** Bot API root URL. */
  apiRoot: "https://api.telegram.org",
  /** Per-request timeout (for getUpdates it is added to the long-poll timeout). */
  requestTimeoutMs: 30_000,
  /** Connections of the client's keep-alive pool. */
  maxConnections: 64,
  /** Largest JSON response the client reads. */
  maxResponseBytes: 64 * 1024 * 1024,
});

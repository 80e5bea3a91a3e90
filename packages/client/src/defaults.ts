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
  /** 429s one read (getMe, getUpdates, getFile, a download) sleeps out before it throws. */
  maxReadRetries: 5,
  /** Most milliseconds one read sleeps on 429s in all; a wait that would pass it throws. */
  maxReadRetryWaitMs: 300_000,
  /** Shortest sleep of a read after a 429, whatever `retry_after` said (0 would be a busy loop). */
  minReadRetryDelayMs: 1_000,
});

// Bucket boundaries (seconds) advised for each histogram, chosen for the times telepace sees:
// pacing waits of a few seconds, Telegram's retry_after of seconds to an hour, handler durations.

/** The explicit bucket boundaries, in seconds, advised to the SDK for each histogram. */
export const histogramBuckets = Object.freeze({
  /** Queue waits: outbox ops, dispatched updates, media permits. */
  wait: Object.freeze([0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]),
  /** Telegram's `retry_after`, whole seconds up to the outbox's 5-minute cap and beyond. */
  retryAfter: Object.freeze([1, 2, 3, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600]),
  /** Processor durations. */
  duration: Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]),
  /** `getUpdates` calls, long polls included. */
  poll: Object.freeze([0.05, 0.1, 0.25, 0.5, 1, 5, 10, 30, 60]),
});

/** Milliseconds (telepace's unit) to seconds (OpenTelemetry's unit of time). */
export function seconds(ms: number): number {
  return ms / 1000;
}

// Reads under 429s: a read is repeated after each rate limit, sleeping `retry_after` (at least a
// minimum) on the client's clock, until a cap on retries or on total wait says stop.

import { type Clock, type Logger, safeLog } from "@telepace/core";
import { RetryAfterError, RetryAfterTooLongError } from "@telepace/outbox";
import { ReadRetryLimitError } from "./errors.js";
import { redactSecret } from "./redact.js";

/** What a {@link ReadRetry} works with. */
export interface ReadRetryOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Redacted from every error before it is looked at or thrown. */
  readonly token: string;
  /** `maxReadRetries`: 429s answered before giving up. */
  readonly maxRetries: number;
  /** `maxReadRetryWaitMs`: total sleep before giving up. */
  readonly maxWaitMs: number;
  /** `minReadRetryDelayMs`: the least a 429 is slept out, whatever `retry_after` says. */
  readonly minDelayMs: number;
  /** The longest `retry_after` waited out at all (the outbox's `maxRetryAfterMs`). */
  readonly maxRetryAfterMs: () => number;
  /** Throws when the client was closed meanwhile. */
  readonly checkOpen: () => void;
}

/** Runs reads, sleeping out 429s within bounds. */
export class ReadRetry {
  readonly #options: ReadRetryOptions;

  constructor(options: ReadRetryOptions) {
    this.#options = options;
  }

  /** Calls `attempt` until it does not answer 429, within the bounds; cancellable by `signal`. */
  async run<T>(
    method: string,
    signal: AbortSignal | undefined,
    attempt: () => Promise<T>,
  ): Promise<T> {
    const { clock, logger, token, maxRetries, maxWaitMs, minDelayMs, checkOpen } = this.#options;
    checkOpen();
    let retries = 0;
    let waitedMs = 0;
    for (;;) {
      try {
        return await attempt();
      } catch (thrown) {
        const error = redactSecret(thrown, token);
        if (!(error instanceof RetryAfterError)) throw error;
        const cap = this.#options.maxRetryAfterMs();
        if (error.retryAfterMs > cap) {
          throw new RetryAfterTooLongError(error.retryAfterMs, cap, { cause: error });
        }
        const sleepMs = Math.max(error.retryAfterMs, minDelayMs);
        const limit =
          retries >= maxRetries
            ? "maxReadRetries"
            : waitedMs + sleepMs > maxWaitMs
              ? "maxReadRetryWaitMs"
              : undefined;
        if (limit !== undefined) {
          safeLog(
            logger,
            "warn",
            { method, retries, waitedMs, limit },
            "rate limited (429): giving up",
          );
          throw new ReadRetryLimitError({
            method,
            limit,
            retries,
            waitedMs,
            retryAfterMs: error.retryAfterMs,
            cause: error,
          });
        }
        safeLog(
          logger,
          "warn",
          { method, retryAfterMs: error.retryAfterMs, sleepMs },
          "rate limited (429): sleeping",
        );
        await clock.sleep(sleepMs, { signal });
        retries++;
        waitedMs += sleepMs;
        checkOpen();
      }
    }
  }
}

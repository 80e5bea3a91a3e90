// A broadcast's calls to its store when the store fails (a journal outage, Redis unreachable):
// retried after a backoff that doubles from 250 ms to 30 s, logged once per outage, counted.

import { type Clock, type Logger, safeLog } from "@telepace/core";
import { BroadcastError } from "./errors.js";
import { broadcastDefaults } from "./options.js";

/** Store failures of one broadcast, and the backoff after them. */
export class StoreRetry {
  readonly #id: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  /** Failures so far (each retried). */
  failures = 0;
  #inRow = 0;

  constructor(id: string, clock: Clock, logger: Logger) {
    this.#id = id;
    this.#clock = clock;
    this.#logger = logger;
  }

  /**
   * Runs `call`, retrying a failure after the backoff until it works, or until `isStopped()`
   * (then `undefined`). A `BroadcastError`, `TypeError` or `RangeError` is an answer, not an
   * outage: it is thrown at once.
   */
  async run<T>(call: () => Promise<T>, isStopped: () => boolean): Promise<T | undefined> {
    for (;;) {
      try {
        const value = await call();
        this.succeeded();
        return value;
      } catch (error) {
        if (
          error instanceof BroadcastError ||
          error instanceof TypeError ||
          error instanceof RangeError
        ) {
          throw error;
        }
        this.failed(error);
        if (isStopped()) return undefined;
        await this.#clock.sleep(this.delayMs());
      }
    }
  }

  /** A call worked: the next failure starts a new outage. */
  succeeded(): void {
    this.#inRow = 0;
  }

  /** Counts and logs a failure (at error the first of an outage, at debug the rest). */
  failed(error: unknown): void {
    this.failures++;
    this.#inRow++;
    safeLog(
      this.#logger,
      this.#inRow === 1 ? "error" : "debug",
      {
        broadcast: this.#id,
        error:
          error instanceof Error ? ((error as { code?: string }).code ?? error.name) : typeof error,
        consecutiveFailures: this.#inRow,
      },
      "broadcast store failed; retrying",
    );
  }

  /** How long to wait before the next attempt. */
  delayMs(): number {
    const { storeRetryBaseMs, storeRetryMaxMs } = broadcastDefaults;
    return Math.min(storeRetryBaseMs * 2 ** Math.max(0, this.#inRow - 1), storeRetryMaxMs);
  }
}

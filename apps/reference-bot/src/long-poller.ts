// Long polling that confirms only finished work: getUpdates (straight to the API, 429s slept out
// by the client) → the dispatcher, waiting for capacity instead of dropping, and the next offset is
// the dispatcher's safe watermark + 1, so a crash never loses an update that had not finished.

import type { Update } from "@grammyjs/types";
import {
  ClientError,
  NetworkError,
  OutboxError,
  TelegramApiError,
  type TelegramClient,
} from "@telepace/client";
import type { Clock } from "@telepace/core";
import type { UpdateDispatcher } from "@telepace/update-dispatch";
import type { Logger } from "pino";

/** A polling failure that retrying cannot fix (another poller, a webhook, a revoked token). */
export class PollingStoppedError extends Error {
  override readonly name = "PollingStoppedError";
}

/** The update types the bot asks for. */
export const ALLOWED_UPDATES = [
  "message",
  "edited_message",
  "callback_query",
  "my_chat_member",
  "stopped_message_generation",
] as const;

/** Options of {@link LongPoller}. */
export interface LongPollerOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Long-poll timeout in seconds (Telegram allows 0–50). */
  readonly timeoutS: number;
}

/** Counters for logs and the demo report. */
export interface PollerCounters {
  polls: number;
  received: number;
  duplicates: number;
  networkErrors: number;
}

const BACKOFF_START_MS = 500;
const BACKOFF_MAX_MS = 30_000;
// When a batch brings nothing new, wait this long for work to finish before asking again, so
// unconfirmed (still running) updates are not fetched in a tight loop.
const IDLE_WAIT_MS = 250;

/** Polls getUpdates and feeds the dispatcher until its signal aborts. */
export class LongPoller {
  readonly #client: TelegramClient;
  readonly #dispatcher: UpdateDispatcher;
  readonly #options: LongPollerOptions;
  readonly counters: PollerCounters = { polls: 0, received: 0, duplicates: 0, networkErrors: 0 };
  // The offset of the last getUpdates sent. Telegram forgets the updates below an offset when
  // the call arrives, so a long poll that stop() aborted has confirmed them already.
  #sentOffset: number | undefined;

  constructor(client: TelegramClient, dispatcher: UpdateDispatcher, options: LongPollerOptions) {
    this.#client = client;
    this.#dispatcher = dispatcher;
    this.#options = options;
  }

  /** The offset that confirms everything finished so far. */
  get confirmedOffset(): number | undefined {
    const watermark = this.#dispatcher.watermark;
    return watermark === undefined ? undefined : watermark + 1;
  }

  /**
   * Runs until `signal` aborts (then resolves).
   * @throws {PollingStoppedError} on 409 (another poller or a webhook) and 401/404 (bad token).
   */
  async run(signal: AbortSignal): Promise<void> {
    const { clock, logger } = this.#options;
    let backoffMs = BACKOFF_START_MS;
    while (!signal.aborted) {
      let updates: Update[];
      try {
        const offset = this.confirmedOffset;
        this.counters.polls++;
        this.#sentOffset = offset;
        updates = await this.#client.getUpdates(
          {
            ...(offset !== undefined ? { offset } : {}),
            timeout: this.#options.timeoutS,
            allowed_updates: [...ALLOWED_UPDATES],
          },
          { signal },
        );
        backoffMs = BACKOFF_START_MS;
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof TelegramApiError && error.errorCode === 409) {
          throw new PollingStoppedError(
            "getUpdates answered 409 Conflict: another instance of this bot is polling, or a webhook is set (deleteWebhook removes it)",
          );
        }
        if (
          error instanceof TelegramApiError &&
          (error.errorCode === 401 || error.errorCode === 404)
        ) {
          throw new PollingStoppedError(
            `getUpdates answered ${error.errorCode}: the bot token was rejected`,
          );
        }
        this.counters.networkErrors++;
        const code =
          error instanceof OutboxError || error instanceof ClientError ? error.code : "unknown";
        const failure = error instanceof NetworkError ? error.failure : undefined;
        logger.warn({ code, failure, backoffMs }, "getUpdates failed; retrying");
        await clock.sleep(backoffMs, { signal }).catch(() => {});
        backoffMs = Math.min(BACKOFF_MAX_MS, backoffMs * 2);
        continue;
      }
      // The whole batch at once: calls for one person keep their order, and a person whose queue
      // is full does not hold back everyone else's updates behind them in the batch.
      this.counters.received += updates.length;
      const results = await Promise.all(
        updates.map((update) =>
          this.#dispatcher.enqueue(update, { wait: true, signal }).catch(() => undefined),
        ),
      );
      let fresh = 0;
      for (const result of results) {
        if (result === undefined) return; // aborted while waiting for capacity
        if (result.status === "accepted") fresh++;
        else if (result.status === "duplicate") this.counters.duplicates++;
        else if (result.reason === "closed") return;
      }
      if (updates.length > 0 && fresh === 0) {
        await this.#dispatcher.drain({ timeoutMs: IDLE_WAIT_MS, signal }).catch(() => {});
      }
    }
  }

  /** Confirms finished updates with Telegram (a zero-timeout getUpdates), e.g. before exiting. */
  async confirm(): Promise<void> {
    const offset = this.confirmedOffset;
    // Nothing finished since the last poll. Asking again would only be held back: the Bot API
    // parks a repeated offset for ~3 s to stop busy loops, which would stall shutdown.
    if (offset === undefined || (this.#sentOffset !== undefined && offset <= this.#sentOffset))
      return;
    await this.#client.getUpdates({ offset, limit: 1, timeout: 0 }).catch((error: unknown) => {
      this.#options.logger.warn(
        { code: (error as { code?: unknown }).code },
        "could not confirm the last updates",
      );
    });
  }
}

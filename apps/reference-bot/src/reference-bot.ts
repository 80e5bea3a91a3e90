// The reference bot: long polling → UpdateDispatcher (per-person order, bounded) → handlers →
// TelegramClient and its outbox (paced, coalesced writes), with files through the media
// scheduler. `launch` checks the token and starts polling; `stop` shuts down in order.

import type { UserFromGetMe } from "@grammyjs/types";
import { NetworkError, TelegramApiError, TelegramClient } from "@telepace/client";
import { type Clock, systemClock } from "@telepace/core";
import type { MediaSchedulerRegistry } from "@telepace/media-scheduler";
import type { OutboxCounters, TelegramOutboxOptions } from "@telepace/outbox";
import { UpdateDispatcher, type UpdateDispatchSnapshot } from "@telepace/update-dispatch";
import type { Logger } from "pino";
import type { AskAnswers, AskCounters } from "./ask-answers.js";
import { createHandlers } from "./bot-handlers.js";
import { LongPoller, type PollerCounters } from "./long-poller.js";
import type { Messenger, MessengerCounters } from "./messenger.js";
import type { RouterCounters, UpdateRouter } from "./update-router.js";
import type { WorkJobCounters, WorkJobs } from "./work-jobs.js";

/** Options of {@link ReferenceBot.launch}. */
export interface ReferenceBotOptions {
  readonly token: string;
  /** Bot API root. @defaultValue "https://api.telegram.org" */
  readonly apiRoot?: string | undefined;
  readonly logger: Logger;
  readonly clock?: Clock | undefined;
  /** Outbox pacing and bounds (defaults: Telegram's limits). */
  readonly outbox?: Omit<TelegramOutboxOptions, "clock" | "logger"> | undefined;
  /** Processors running at once. @defaultValue 16 */
  readonly maxConcurrency?: number | undefined;
  /** Longest one update may take before its signal aborts, in ms. @defaultValue 120000 */
  readonly updateTimeoutMs?: number | undefined;
  /** Progress updates per second a /work job asks for. @defaultValue 5 */
  readonly progressHz?: number | undefined;
  /** Long-poll timeout in seconds. @defaultValue 25 */
  readonly pollTimeoutS?: number | undefined;
  /** /work jobs running at once. @defaultValue 256 */
  readonly maxJobs?: number | undefined;
  /** Tokens per second an /ask answer is generated at. @defaultValue 40 */
  readonly askTokensPerSecond?: number | undefined;
}

/** The bot could not start: a rejected token or an unreachable API. One line, no secrets. */
export class StartupError extends Error {
  override readonly name = "StartupError";
}

/** Everything the bot counts, for its logs and the demo report. */
export interface BotStats {
  readonly poller: Readonly<PollerCounters>;
  readonly router: Readonly<RouterCounters>;
  readonly messenger: Readonly<MessengerCounters>;
  readonly jobs: Readonly<WorkJobCounters> & { readonly running: number };
  readonly answers: Readonly<AskCounters> & { readonly running: number };
  readonly dispatcher: UpdateDispatchSnapshot;
  readonly outbox: OutboxCounters;
  readonly media: { readonly schedulers: number };
}

/** What {@link ReferenceBot.stop} did. */
export interface StopReport {
  /** Updates the dispatcher handed back unstarted (Telegram redelivers them next time). */
  readonly unstarted: number;
  /** Updates still running at the deadline (their signals were aborted). */
  readonly interrupted: number;
}

/** A running reference bot. */
export class ReferenceBot {
  /** The bot as getMe describes it. */
  readonly me: UserFromGetMe;
  /** Settles when polling ends: resolves after `stop`, rejects with a `PollingStoppedError`. */
  readonly polling: Promise<void>;
  readonly #client: TelegramClient;
  readonly #registry: MediaSchedulerRegistry;
  readonly #dispatcher: UpdateDispatcher;
  readonly #poller: LongPoller;
  readonly #router: UpdateRouter;
  readonly #messenger: Messenger;
  readonly #jobs: WorkJobs;
  readonly #answers: AskAnswers;
  readonly #pollController = new AbortController();
  readonly #logger: Logger;
  #stopping: Promise<StopReport> | undefined;

  private constructor(
    me: UserFromGetMe,
    client: TelegramClient,
    options: ReferenceBotOptions,
    mediaDc: string,
  ) {
    const clock = options.clock ?? systemClock;
    const logger = options.logger;
    this.me = me;
    this.#client = client;
    this.#logger = logger;
    const handlers = createHandlers(me, client, options, mediaDc);
    this.#registry = handlers.registry;
    this.#messenger = handlers.messenger;
    this.#jobs = handlers.jobs;
    this.#router = handlers.router;
    this.#answers = handlers.answers;
    this.#dispatcher = new UpdateDispatcher(
      (update, signal) => this.#router.handle(update, signal),
      {
        clock,
        logger: logger.child({ component: "dispatch" }),
        maxConcurrency: options.maxConcurrency ?? 16,
        timeoutMs: options.updateTimeoutMs ?? 120_000,
      },
    );
    this.#poller = new LongPoller(client, this.#dispatcher, {
      clock,
      logger: logger.child({ component: "poller" }),
      timeoutS: options.pollTimeoutS ?? 25,
    });
    this.polling = this.#poller.run(this.#pollController.signal);
    // Observed by whoever awaits it; keep an unobserved rejection from crashing the process.
    this.polling.catch(() => {});
  }

  /**
   * Checks the token with getMe and starts polling.
   * @throws {StartupError} when the token is rejected or the API cannot be reached.
   */
  static async launch(options: ReferenceBotOptions): Promise<ReferenceBot> {
    const apiRoot = options.apiRoot ?? "https://api.telegram.org";
    const client = new TelegramClient({
      token: options.token,
      apiRoot,
      clock: options.clock,
      logger: options.logger.child({ component: "client" }),
      outbox: options.outbox,
    });
    let me: UserFromGetMe;
    try {
      me = await client.getMe({ timeoutMs: 10_000 });
    } catch (error) {
      await client.close({ drain: false, timeoutMs: 0 }).catch(() => {});
      if (error instanceof TelegramApiError) {
        throw new StartupError(
          error.errorCode === 401 || error.errorCode === 404
            ? `The Bot API at ${apiRoot} rejected the token (${error.errorCode} ${error.description})`
            : `getMe failed at ${apiRoot}: ${error.errorCode} ${error.description}`,
        );
      }
      if (error instanceof NetworkError) {
        throw new StartupError(`Cannot reach the Bot API at ${apiRoot} (${error.failure})`);
      }
      throw error;
    }
    const bot = new ReferenceBot(me, client, options, new URL(apiRoot).host);
    options.logger.info({ username: me.username, id: me.id }, "bot started");
    return bot;
  }

  /** Whether the bot still writes to `chatId` (false once it was blocked or removed there). */
  isReachable(chatId: number): boolean {
    return this.#messenger.isReachable(chatId);
  }

  /** A fresh snapshot of every counter. */
  stats(): BotStats {
    return {
      poller: { ...this.#poller.counters },
      router: { ...this.#router.counters },
      messenger: { ...this.#messenger.counters },
      jobs: {
        ...this.#jobs.counters,
        ended: { ...this.#jobs.counters.ended },
        running: this.#jobs.running,
      },
      answers: { ...this.#answers.counters, running: this.#answers.running },
      dispatcher: this.#dispatcher.snapshot(),
      outbox: this.#client.outbox.snapshot().counters,
      media: { schedulers: this.#registry.size },
    };
  }

  /**
   * Shuts down in order: stop polling, let the dispatcher finish (up to the deadline), interrupt
   * running jobs (each still sends its final message), confirm finished updates, flush the
   * outbox, close the clients. Idempotent.
   */
  stop(options: { readonly timeoutMs?: number } = {}): Promise<StopReport> {
    this.#stopping ??= this.#stop(options.timeoutMs ?? 10_000);
    return this.#stopping;
  }

  async #stop(timeoutMs: number): Promise<StopReport> {
    this.#logger.info("shutting down");
    this.#pollController.abort();
    await this.polling.catch(() => {});
    const closed = await this.#dispatcher.close({ timeoutMs });
    await Promise.all([this.#jobs.interruptAll(), this.#answers.interruptAll()]);
    await this.#poller.confirm();
    await this.#client.close({ drain: true, timeoutMs });
    await this.#registry.close({ timeoutMs }).catch(() => {});
    const report = { unstarted: closed.unstarted.length, interrupted: closed.interrupted.length };
    this.#logger.info(report, "stopped");
    return report;
  }
}

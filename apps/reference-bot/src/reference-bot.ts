// The reference bot: long polling through an UpdateIntake (each batch stored in a journal and
// confirmed at once; per-person order, bounded) → handlers → TelegramClient and its outbox (paced,
// coalesced writes), with files through the media scheduler, and on request a Prometheus endpoint.
// `launch` checks the token, opens the journal and starts polling; `stop` shuts down in order.

import type { UserFromGetMe } from "@grammyjs/types";
import { NetworkError, TelegramApiError, TelegramClient } from "@telepace/client";
import { type Clock, systemClock } from "@telepace/core";
import { FileUpdateJournal, JournalError } from "@telepace/journal-file";
import type { MediaSchedulerRegistry } from "@telepace/media-scheduler";
import type { OutboxCounters, TelegramOutboxOptions } from "@telepace/outbox";
import {
  MemoryUpdateJournal,
  type UpdateDispatchSnapshot,
  UpdateIntake,
  type UpdateIntakeSnapshot,
  type UpdateJournal,
} from "@telepace/update-dispatch";
import type { Logger } from "pino";
import type { AdminBroadcasts } from "./admin-broadcasts.js";
import type { AskAnswers, AskCounters } from "./ask-answers.js";
import type { BotEventSink } from "./bot-events.js";
import { createHandlers } from "./bot-handlers.js";
import { dataDirProblem } from "./data-dir.js";
import { JournaledPacingStore } from "./journaled-pacing-store.js";
import { KnownUsers } from "./known-users.js";
import type { Messenger, MessengerCounters } from "./messenger.js";
import { MetricsEndpoint, MetricsEndpointError } from "./metrics-endpoint.js";
import { reportedGetUpdates, reportedProcessor } from "./reported-intake.js";
import { ALLOWED_UPDATES, type RouterCounters, type UpdateRouter } from "./update-router.js";
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
  /** Processors running at once. @defaultValue 64 */
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
  /**
   * Directory of the durable journal (`FileUpdateJournal`): stored updates and running jobs
   * survive a crash there. Created if missing; one bot process per directory.
   */
  readonly dataDir?: string | undefined;
  /**
   * A journal to use instead (not closed by the bot), e.g. a `MemoryUpdateJournal` in tests.
   * Without `dataDir` or `journal` the bot keeps its journal in memory, which a crash loses.
   */
  readonly journal?: UpdateJournal | undefined;
  /** Receives every {@link BotEvent}, e.g. to account for updates across a crash. */
  readonly onEvent?: BotEventSink | undefined;
  /**
   * Serve Prometheus metrics on `http://127.0.0.1:<port>/metrics` (0: a free port; see
   * {@link ReferenceBot.metricsUrl}). @defaultValue none: no metrics are served
   */
  readonly metricsPort?: number | undefined;
  /** User ids allowed to /broadcast. @defaultValue none */
  readonly admins?: readonly number[] | undefined;
  /** Free broadcast sends per second, 1–30. @defaultValue 30 */
  readonly broadcastRate?: number | undefined;
}

/**
 * Places of a group's 20 messages a minute that progress edits leave to sends and deletes: edits
 * take at most 2. The outbox's default (3) lets edits of running jobs take 17, and in a busy
 * group replies and finals then queue for the rest of the minute; a progress bar can lag instead.
 */
const GROUP_SEND_RESERVE = 18;

/**
 * Processors running at once. Handlers wait on I/O (an /ask answer streams for up to ~20 s inside
 * its update), so slots are cheap; 16 let a crowd's answers hold every slot.
 */
const DEFAULT_MAX_CONCURRENCY = 64;

/** The bot could not start: a rejected token or an unreachable API. One line, no secrets. */
export class StartupError extends Error {
  override readonly name = "StartupError";
}

/** Everything the bot counts, for its logs and the demo report. */
export interface BotStats {
  readonly intake: UpdateIntakeSnapshot;
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
  /** Stored updates that did not finish by the deadline: the next start replays them. */
  readonly unfinished: number;
}

/** Where the bot keeps its journal, for its startup line and the demo report. */
export function describeJournal(journal: UpdateJournal): string {
  const snapshot = journal.snapshot();
  const where = "directory" in snapshot ? ` in ${String(snapshot.directory)}` : "";
  return `${snapshot.kind} journal${where} (${snapshot.isDurable ? "durable" : "not crash-safe"})`;
}

/** Opens the journal the options ask for; the bot closes it at stop if it opened it. */
async function openJournal(
  options: ReferenceBotOptions,
): Promise<{ journal: UpdateJournal; owned: boolean }> {
  if (options.journal !== undefined) return { journal: options.journal, owned: false };
  if (options.dataDir === undefined) return { journal: new MemoryUpdateJournal(), owned: true };
  const problem = await dataDirProblem(options.dataDir);
  if (problem !== undefined) {
    throw new StartupError(`Cannot open the journal in ${options.dataDir}: ${problem}`);
  }
  try {
    const journal = await FileUpdateJournal.open(options.dataDir, {
      logger: options.logger.child({ component: "journal" }),
    });
    return { journal, owned: true };
  } catch (error) {
    if (error instanceof JournalError) {
      throw new StartupError(`Cannot open the journal in ${options.dataDir}: ${error.message}`);
    }
    throw error;
  }
}

/** What the journal held when the bot started: an earlier process's unfinished work. */
export interface StartupState {
  /** Stored updates the intake replays before it polls. */
  readonly unfinishedUpdates: number;
  /** /work jobs an earlier process left running; each gets an "interrupted" message. */
  readonly leftoverJobs: number;
}

/** A running reference bot. */
export class ReferenceBot {
  /** The bot as getMe describes it. */
  readonly me: UserFromGetMe;
  /** What the journal held at start. */
  startup: StartupState = { unfinishedUpdates: 0, leftoverJobs: 0 };
  /** Settles when polling ends: resolves after `stop`, rejects with a `PollingStoppedError`. */
  readonly polling: Promise<void>;
  readonly #client: TelegramClient;
  readonly #registry: MediaSchedulerRegistry;
  readonly #journal: UpdateJournal;
  readonly #ownsJournal: boolean;
  readonly #intake: UpdateIntake;
  readonly #router: UpdateRouter;
  readonly #messenger: Messenger;
  readonly #jobs: WorkJobs;
  readonly #answers: AskAnswers;
  readonly #broadcasts: AdminBroadcasts;
  readonly #knownUsers: KnownUsers;
  readonly #pollController = new AbortController();
  readonly #jobsRecovered: Promise<number>;
  readonly #logger: Logger;
  #metrics: MetricsEndpoint | undefined;
  #stopping: Promise<StopReport> | undefined;

  private constructor(
    me: UserFromGetMe,
    client: TelegramClient,
    journal: { journal: UpdateJournal; owned: boolean },
    options: ReferenceBotOptions,
    mediaDc: string,
    knownUsers: KnownUsers,
  ) {
    const clock = options.clock ?? systemClock;
    const logger = options.logger;
    const onEvent = options.onEvent ?? (() => {});
    this.me = me;
    this.#client = client;
    this.#logger = logger;
    this.#journal = journal.journal;
    this.#ownsJournal = journal.owned;
    const handlers = createHandlers(
      me,
      client,
      { ...options, journal: this.#journal, onEvent, knownUsers },
      mediaDc,
    );
    this.#broadcasts = handlers.broadcasts;
    this.#knownUsers = knownUsers;
    this.#registry = handlers.registry;
    this.#messenger = handlers.messenger;
    this.#jobs = handlers.jobs;
    this.#router = handlers.router;
    this.#answers = handlers.answers;
    this.#intake = new UpdateIntake(reportedProcessor(this.#router, onEvent), {
      getUpdates: reportedGetUpdates(client, onEvent),
      journal: this.#journal,
      allowedUpdates: [...ALLOWED_UPDATES],
      pollTimeoutSeconds: options.pollTimeoutS ?? 25,
      clock,
      logger: logger.child({ component: "intake" }),
      dispatcher: {
        maxConcurrency: options.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY,
        timeoutMs: options.updateTimeoutMs ?? 120_000,
      },
    });
    // The jobs a crash left are read before the first poll, so they are told apart from new ones.
    this.#jobsRecovered = this.#jobs.recover();
    // Broadcasts a crash cut off go on where their journal records say, before the first poll.
    this.polling = this.#jobsRecovered
      .then(() => this.#broadcasts.recover())
      .then(() => this.#intake.run({ signal: this.#pollController.signal }));
    // Observed by whoever awaits it; keep an unobserved rejection from crashing the process.
    this.polling.catch(() => {});
  }

  /**
   * Checks the token with getMe and starts polling.
   * @throws {StartupError} when the token is rejected or the API cannot be reached.
   */
  static async launch(options: ReferenceBotOptions): Promise<ReferenceBot> {
    const apiRoot = options.apiRoot ?? "https://api.telegram.org";
    const clock = options.clock ?? systemClock;
    const journal = await openJournal(options);
    const closeJournal = async () => {
      if (journal.owned) await journal.journal.close().catch(() => {});
    };
    let client: TelegramClient;
    try {
      // A durable journal also keeps the groups' pacing, so a restart does not burst into them.
      const pacingStore = journal.journal.snapshot().isDurable
        ? await JournaledPacingStore.restore(
            journal.journal,
            clock,
            options.logger.child({ component: "pacing" }),
          )
        : undefined;
      client = new TelegramClient({
        token: options.token,
        apiRoot,
        clock: options.clock,
        logger: options.logger.child({ component: "client" }),
        outbox: {
          sendReserve: GROUP_SEND_RESERVE,
          ...options.outbox,
          ...(pacingStore === undefined ? {} : { pacingStore }),
        },
      });
    } catch (error) {
      await closeJournal();
      throw error;
    }
    let me: UserFromGetMe;
    try {
      me = await client.getMe({ timeoutMs: 10_000 });
    } catch (error) {
      await client.close({ drain: false, timeoutMs: 0 }).catch(() => {});
      await closeJournal();
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
    const unfinishedUpdates = journal.journal.snapshot().unfinished;
    const knownUsers = await KnownUsers.open(options.dataDir);
    const bot = new ReferenceBot(me, client, journal, options, new URL(apiRoot).host, knownUsers);
    const leftoverJobs = await bot.#jobsRecovered.catch(async (error: unknown) => {
      await bot.stop({ timeoutMs: 0 });
      throw error;
    });
    if (options.metricsPort !== undefined) {
      try {
        bot.#metrics = await MetricsEndpoint.start(options.metricsPort, {
          outbox: client.outbox,
          intake: bot.#intake,
          mediaRegistry: bot.#registry,
        });
      } catch (error) {
        await bot.stop({ timeoutMs: 0 });
        throw error instanceof MetricsEndpointError ? new StartupError(error.message) : error;
      }
    }
    bot.startup = Object.freeze({ unfinishedUpdates, leftoverJobs });
    options.logger.info(
      {
        username: me.username,
        id: me.id,
        journal: describeJournal(journal.journal),
        unfinishedUpdates,
        leftoverJobs,
        metrics: bot.metricsUrl,
      },
      "bot started",
    );
    return bot;
  }

  /** Where Prometheus scrapes the bot's metrics; undefined without `metricsPort`. */
  get metricsUrl(): string | undefined {
    return this.#metrics?.url;
  }

  /** The journal the bot stores updates and running jobs in. */
  get journal(): UpdateJournal {
    return this.#journal;
  }

  /** Whether the bot still writes to `chatId` (false once it was blocked or removed there). */
  isReachable(chatId: number): boolean {
    return this.#messenger.isReachable(chatId);
  }

  /** A fresh snapshot of every counter. */
  stats(): BotStats {
    return {
      intake: this.#intake.snapshot(),
      router: { ...this.#router.counters },
      messenger: { ...this.#messenger.counters },
      jobs: {
        ...this.#jobs.counters,
        ended: { ...this.#jobs.counters.ended },
        running: this.#jobs.running,
      },
      answers: { ...this.#answers.counters, running: this.#answers.running },
      dispatcher: this.#intake.snapshot().dispatcher,
      outbox: this.#client.outbox.snapshot().counters,
      media: { schedulers: this.#registry.size },
    };
  }

  /**
   * Shuts down in order: stop polling, let stored updates finish (up to the deadline; the rest
   * stays in the journal), interrupt running jobs (each still sends its final message and drops
   * its record), flush the outbox, close the journal and the clients. Idempotent.
   */
  stop(options: { readonly timeoutMs?: number } = {}): Promise<StopReport> {
    this.#stopping ??= this.#stop(options.timeoutMs ?? 10_000);
    return this.#stopping;
  }

  async #stop(timeoutMs: number): Promise<StopReport> {
    this.#logger.info("shutting down");
    // Metrics stop first: they read the components, which close next.
    await this.#metrics?.close();
    this.#pollController.abort();
    await this.polling.catch(() => {});
    const closed = await this.#intake.close({ timeoutMs });
    await Promise.all([
      this.#jobs.interruptAll(),
      this.#answers.interruptAll(),
      this.#broadcasts.close(),
      this.#knownUsers.flush(),
    ]);
    await this.#client.close({ drain: true, timeoutMs });
    await this.#registry.close({ timeoutMs }).catch(() => {});
    if (this.#ownsJournal) await this.#journal.close().catch(() => {});
    const report = { unfinished: closed.unfinished };
    this.#logger.info(report, "stopped");
    return report;
  }
}

// The bot's handlers — the router with its messenger, /work jobs, /ask answers and media
// registry — built the same way whether updates come from this process's poller or from a queue
// shared with others.

import type { UserFromGetMe } from "@grammyjs/types";
import type { TelegramClient } from "@telepace/client";
import { type Clock, systemClock } from "@telepace/core";
import { MediaSchedulerRegistry } from "@telepace/media-scheduler";
import { MemoryUpdateJournal } from "@telepace/update-dispatch";
import type { Logger } from "pino";
import { AdminBroadcasts } from "./admin-broadcasts.js";
import { AskAnswers } from "./ask-answers.js";
import type { BotEventSink } from "./bot-events.js";
import { type JobStore, JournalJobStore } from "./job-store.js";
import { KnownUsers } from "./known-users.js";
import { Messenger } from "./messenger.js";
import { UpdateRouter } from "./update-router.js";
import { WorkJobs } from "./work-jobs.js";

/** What the handlers are built from. */
export interface HandlerOptions {
  readonly logger: Logger;
  readonly clock?: Clock | undefined;
  /** Progress updates per second a /work job asks for. @defaultValue 5 */
  readonly progressHz?: number | undefined;
  /** /work jobs running at once. @defaultValue 256 */
  readonly maxJobs?: number | undefined;
  /** Tokens per second an /ask answer is generated at (the AskAnswers default when unset). */
  readonly askTokensPerSecond?: number | undefined;
  /**
   * The journal whose application state records running /work jobs, so a restart can end them.
   * @defaultValue a `MemoryUpdateJournal` of the handlers' own (the records go with the process)
   */
  readonly journal?: ConstructorParameters<typeof JournalJobStore>[0] | undefined;
  /** Where running /work jobs are recorded instead (Redis, for several processes). */
  readonly jobStore?: JobStore | undefined;
  /** Receives every bot event (updates handled, jobs started and ended). */
  readonly onEvent?: BotEventSink | undefined;
  /** User ids allowed to /broadcast. @defaultValue none */
  readonly admins?: readonly number[] | undefined;
  /** Free broadcast sends per second. @defaultValue 30 */
  readonly broadcastRate?: number | undefined;
  /** Who a /broadcast reaches. @defaultValue an in-memory list */
  readonly knownUsers?: KnownUsers | undefined;
}

export interface BotHandlers {
  readonly registry: MediaSchedulerRegistry;
  readonly messenger: Messenger;
  readonly jobs: WorkJobs;
  readonly answers: AskAnswers;
  readonly broadcasts: AdminBroadcasts;
  readonly router: UpdateRouter;
}

export function createHandlers(
  me: UserFromGetMe,
  client: TelegramClient,
  options: HandlerOptions,
  mediaDc: string,
): BotHandlers {
  const clock = options.clock ?? systemClock;
  const logger = options.logger;
  const registry = new MediaSchedulerRegistry({
    clock,
    logger: logger.child({ component: "media" }),
  });
  const onEvent = options.onEvent ?? (() => {});
  const messenger = new Messenger(client, logger.child({ component: "messenger" }), onEvent);
  const jobs = new WorkJobs(messenger, {
    clock,
    logger: logger.child({ component: "jobs" }),
    store: options.jobStore ?? new JournalJobStore(options.journal ?? new MemoryUpdateJournal()),
    onEvent,
    progressHz: options.progressHz ?? 5,
    maxJobs: options.maxJobs ?? 256,
  });
  const answers = new AskAnswers(client, {
    clock,
    logger: logger.child({ component: "answers" }),
    tokensPerSecond: options.askTokensPerSecond,
    onEvent,
  });
  const knownUsers = options.knownUsers ?? KnownUsers.inMemory();
  const broadcasts = new AdminBroadcasts({
    client,
    messenger,
    journal: options.journal ?? new MemoryUpdateJournal(),
    knownUsers,
    admins: options.admins ?? [],
    perSecond: options.broadcastRate ?? 30,
    clock,
    logger: logger.child({ component: "broadcasts" }),
  });
  const router = new UpdateRouter({
    me,
    client,
    messenger,
    jobs,
    answers,
    broadcasts,
    knownUsers,
    registry,
    mediaDc,
    logger: logger.child({ component: "router" }),
  });
  return { registry, messenger, jobs, answers, broadcasts, router };
}

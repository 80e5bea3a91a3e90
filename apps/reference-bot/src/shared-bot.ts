// One process of the reference bot run as several against one Redis: writes paced through
// RedisPacingStore, updates from the shared queue (role worker or all) and, in role poller or all,
// a candidate for the poller lease; /work jobs, their progress and Cancel presses in Redis too, so
// a press on any process reaches the job and a survivor ends the jobs of a process that died.
// Says it serves only once Redis has answered. Runs until SIGINT/SIGTERM, or until polling stops
// for good (409, 401).

import { TelegramClient } from "@telepace/client";
import {
  botIdOf,
  RedisJobRegistry,
  RedisPacingStore,
  RedisUpdateQueue,
  SharedPoller,
  SharedUpdateWorker,
} from "@telepace/redis";
import { PollingStoppedError } from "@telepace/update-dispatch";
import type { Logger } from "pino";
import type { BotEventSink } from "./bot-events.js";
import { createHandlers } from "./bot-handlers.js";
import { scrub } from "./logger.js";
import { MetricsEndpoint, MetricsEndpointError } from "./metrics-endpoint.js";
import { checkRedisAtStart } from "./redis-startup.js";
import { StartupError } from "./reference-bot.js";
import { reportedGetUpdates, reportedProcessor } from "./reported-intake.js";
import type { SharedConfig } from "./shared-config.js";
import { SharedJobStore } from "./shared-job-store.js";

export interface SharedBotOptions extends SharedConfig {
  readonly token: string;
  readonly apiRoot: string;
  readonly logger: Logger;
  /** Serve this process's outbox and media metrics on loopback (see `--metrics-port`). */
  readonly metricsPort?: number | undefined;
  /** Prints a line for the operator (stderr): waiting for Redis, warnings about it. */
  readonly say: (line: string) => void;
  /** Called once the process serves: the bot's username and where its metrics are scraped. */
  readonly onReady?: (ready: SharedBotReady) => void;
  /** Receives every bot event (updates handled, jobs started, ended and recovered). */
  readonly onEvent?: BotEventSink | undefined;
}

/** What {@link SharedBotOptions.onReady} learns. */
export interface SharedBotReady {
  readonly username: string;
  /** Undefined without `metricsPort`. */
  readonly metricsUrl: string | undefined;
  /** This process's name in the worker's leases and the jobs' owners. */
  readonly workerId: string;
  /** Jobs of stopped processes this one found at start and is ending for their users. */
  readonly leftoverJobs: number;
  /** Stored updates no process had finished when this one started. */
  readonly unfinishedUpdates: number;
}

/** Longest one update may take before its signal aborts, in ms (as in one process). */
const UPDATE_TIMEOUT_MS = 120_000;

/** Why this process stopped serving when polling stopped for good. */
function pollingStoppedLine(error: PollingStoppedError): string {
  const hint =
    error.errorCode === 409
      ? " Every process of one bot must poll through the same Redis (the same REDIS_URL)."
      : "";
  return `Polling stopped, so this process stopped (its worker closed, its jobs ended): ${error.message}.${hint}`;
}

/**
 * Runs until `signal` aborts, or polling stops for good (409, 401); resolves the exit code (1
 * when polling stopped, after one line saying why).
 */
export async function runSharedBot(
  options: SharedBotOptions,
  signal: AbortSignal,
): Promise<number> {
  const { token, apiRoot, logger, role, redisUrl } = options;
  const botId = botIdOf(token);
  const workerId = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const pacingStore = new RedisPacingStore({ redis: redisUrl, botId });
  const queue = new RedisUpdateQueue({ redis: redisUrl, botId });
  const registry = new RedisJobRegistry({
    redis: redisUrl,
    botId,
    ownerId: workerId,
    leaseMs: options.leaseMs,
    renewMs: options.renewMs,
    logger: logger.child({ component: "jobs" }),
  });
  const registryStop = new AbortController();
  const client = new TelegramClient({
    token,
    apiRoot,
    logger: logger.child({ component: "client" }),
    outbox: { pacingStore },
  });
  try {
    const me = await client.getMe({ timeoutMs: 10_000 }).catch(() => {
      throw new StartupError(`getMe failed at ${apiRoot}: check the token and the API root`);
    });
    await checkRedisAtStart(queue, {
      isStrict: options.isStrict,
      logger: logger.child({ component: "redis" }),
      say: options.say,
      signal,
    });
    const onEvent = options.onEvent ?? (() => {});
    const jobStore = new SharedJobStore(registry, logger, registryStop.signal);
    const handlers = createHandlers(
      me,
      client,
      { logger, jobStore, onEvent },
      new URL(apiRoot).host,
    );
    const { router, jobs, registry: media } = handlers;
    const leftoverJobs = await jobs.recover();
    const worker =
      role === "poller"
        ? undefined
        : new SharedUpdateWorker(queue, reportedProcessor(router, onEvent), {
            workerId,
            leaseMs: options.leaseMs,
            heartbeatMs: options.renewMs,
            timeoutMs: UPDATE_TIMEOUT_MS,
            logger: logger.child({ component: "worker" }),
          });
    const poller =
      role === "worker"
        ? undefined
        : new SharedPoller(queue, {
            getUpdates: reportedGetUpdates(client, onEvent),
            pollerId: workerId,
            leaseMs: options.pollerLeaseMs,
            logger: logger.child({ component: "poller" }),
          });
    const metrics =
      options.metricsPort === undefined
        ? undefined
        : await MetricsEndpoint.start(options.metricsPort, {
            outbox: client.outbox,
            mediaRegistry: media,
            sharedWorker: worker,
            sharedQueue: queue,
          }).catch((error: unknown) => {
            throw error instanceof MetricsEndpointError ? new StartupError(error.message) : error;
          });
    logger.info(
      { username: me.username, role, workerId, leftoverJobs, metrics: metrics?.url },
      "bot process started",
    );
    const unfinishedUpdates = await queue.unfinished();
    options.onReady?.({
      username: me.username,
      metricsUrl: metrics?.url,
      workerId,
      leftoverJobs,
      unfinishedUpdates,
    });
    // Polling stops for good on a 409 (a poller outside this Redis, or a webhook) or a 401: the
    // process then stops as on a signal, its worker closed and its jobs ended, and says why.
    const serving = new AbortController();
    const stopServing = (): void => serving.abort();
    if (signal.aborted) stopServing();
    signal.addEventListener("abort", stopServing, { once: true });
    let failure: unknown;
    const untilStopped = (running: Promise<void> | undefined) =>
      running?.catch((error: unknown) => {
        failure ??= error;
        stopServing();
      });
    await Promise.all([
      untilStopped(worker?.run({ signal: serving.signal })),
      untilStopped(poller?.run({ signal: serving.signal })),
    ]);
    signal.removeEventListener("abort", stopServing);
    await metrics?.close();
    await worker?.close({ timeoutMs: 10_000 });
    // Each running job still sends its final message and drops its record.
    await jobs.interruptAll();
    await media.close({ timeoutMs: 10_000 }).catch(() => {});
    if (failure instanceof PollingStoppedError) {
      logger.error({ code: failure.code }, "polling stopped");
      options.say(scrub(pollingStoppedLine(failure), [token]));
      return 1;
    }
    if (failure !== undefined) throw failure;
    return 0;
  } finally {
    registryStop.abort();
    await client.close({ drain: true, timeoutMs: 10_000 });
    await Promise.all([queue.close(), pacingStore.close(), registry.close()]);
  }
}

// One process of the reference bot run as several against one Redis: writes paced through
// RedisPacingStore, updates from the shared queue (role worker or all) and, in role poller or all,
// a candidate for the poller lease. Runs until SIGINT/SIGTERM.

import { TelegramClient } from "@telepace/client";
import {
  botIdOf,
  RedisPacingStore,
  RedisUpdateQueue,
  SharedPoller,
  SharedUpdateWorker,
} from "@telepace/redis";
import type { Logger } from "pino";
import { createHandlers } from "./bot-handlers.js";
import { MetricsEndpoint, MetricsEndpointError } from "./metrics-endpoint.js";
import { StartupError } from "./reference-bot.js";
import type { SharedConfig } from "./shared-config.js";

export interface SharedBotOptions extends SharedConfig {
  readonly token: string;
  readonly apiRoot: string;
  readonly logger: Logger;
  /** Serve this process's outbox and media metrics on loopback (see `--metrics-port`). */
  readonly metricsPort?: number | undefined;
  /** Called once the process serves: the bot's username and where its metrics are scraped. */
  readonly onReady?: (ready: SharedBotReady) => void;
}

/** What {@link SharedBotOptions.onReady} learns. */
export interface SharedBotReady {
  readonly username: string;
  /** Undefined without `metricsPort`. */
  readonly metricsUrl: string | undefined;
}

/** Runs until `signal` aborts; resolves the exit code. */
export async function runSharedBot(
  options: SharedBotOptions,
  signal: AbortSignal,
): Promise<number> {
  const { token, apiRoot, logger, role, redisUrl } = options;
  const botId = botIdOf(token);
  const pacingStore = new RedisPacingStore({ redis: redisUrl, botId });
  const queue = new RedisUpdateQueue({ redis: redisUrl, botId });
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
    const { router, jobs, registry } = createHandlers(
      me,
      client,
      { logger },
      new URL(apiRoot).host,
    );
    const worker =
      role === "poller"
        ? undefined
        : new SharedUpdateWorker(queue, (update, abort) => router.handle(update, abort), {
            logger: logger.child({ component: "worker" }),
          });
    const poller =
      role === "worker"
        ? undefined
        : new SharedPoller(queue, {
            getUpdates: (params, call) => client.getUpdates(params, call),
            logger: logger.child({ component: "poller" }),
          });
    const metrics =
      options.metricsPort === undefined
        ? undefined
        : await MetricsEndpoint.start(options.metricsPort, {
            outbox: client.outbox,
            mediaRegistry: registry,
            sharedWorker: worker,
            sharedQueue: queue,
          }).catch((error: unknown) => {
            throw error instanceof MetricsEndpointError ? new StartupError(error.message) : error;
          });
    logger.info({ username: me.username, role, metrics: metrics?.url }, "bot process started");
    options.onReady?.({ username: me.username, metricsUrl: metrics?.url });
    await Promise.all([worker?.run({ signal }), poller?.run({ signal })]);
    await metrics?.close();
    await worker?.close({ timeoutMs: 10_000 });
    await jobs.interruptAll();
    await registry.close({ timeoutMs: 10_000 }).catch(() => {});
    return 0;
  } finally {
    await client.close({ drain: true, timeoutMs: 10_000 });
    await Promise.all([queue.close(), pacingStore.close()]);
  }
}

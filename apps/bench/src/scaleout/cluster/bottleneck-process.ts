// One process of the throttler peer: a grammY bot whose API calls go through
// @grammyjs/transformer-throttler with Bottleneck's Redis clustering (every process's global,
// group and per-chat limiters share state under one id) and then @grammyjs/auto-retry. It gets its
// updates as a webhook behind a load balancer that routes by chat would hand them over (the parent
// sends them over IPC), runs them through `sequentialize` by chat and echoes each text. Serves run
// after run (process-host.ts): each run gets its own bot, limiters and Redis connections.

import { autoRetry } from "@grammyjs/auto-retry";
import { sequentialize } from "@grammyjs/runner";
import { apiThrottler } from "@grammyjs/transformer-throttler";
import Bottleneck from "bottleneck";
import { Bot } from "grammy";
import Redis from "ioredis";
import { type HostedRun, serveRuns } from "./process-host.js";
import type { PeerConfig, PeerStats } from "./process-messages.js";
import { UpdateCounter } from "./update-counter.js";

async function startRun(config: PeerConfig): Promise<HostedRun<PeerStats>> {
  const redisUrl = new URL(config.redisUrl);
  // One connection per limiter and group, as Bottleneck makes them by default; made here so the
  // run's end can disconnect them (the throttler keeps its limiters to itself). Bottleneck
  // requires "ioredis" from its own folder; hand it the module instead.
  const connections: Bottleneck.IORedisConnection[] = [];
  const cluster = (id: string): Bottleneck.ConstructorOptions => {
    const connection = new Bottleneck.IORedisConnection({
      clientOptions: { host: redisUrl.hostname, port: Number(redisUrl.port) },
      Redis,
    } as Bottleneck.IORedisConnectionOptions);
    connections.push(connection);
    return { datastore: "ioredis", connection, id: `${config.prefix}-${id}` };
  };
  const bot = new Bot(config.token, { client: { apiRoot: config.apiRoot } });
  // The throttler's defaults (apiThrottler with no options), each made clustered.
  bot.api.config.use(
    apiThrottler({
      global: {
        reservoir: 30,
        reservoirRefreshAmount: 30,
        reservoirRefreshInterval: 1_000,
        ...cluster("global"),
      },
      group: {
        maxConcurrent: 1,
        minTime: 1_000,
        reservoir: 20,
        reservoirRefreshAmount: 20,
        reservoirRefreshInterval: 60_000,
        ...cluster("group"),
      },
      out: { maxConcurrent: 1, minTime: 1_000, ...cluster("out") },
    }),
  );
  // Installed second, so outermost: a retried call goes through the throttler again.
  bot.api.config.use(autoRetry());
  bot.use(sequentialize((ctx) => ctx.chat?.id.toString()));
  bot.on("message:text", (ctx) => ctx.reply(`echo ${ctx.message.text}`));
  const updates = new UpdateCounter();
  await bot.init();
  return {
    getMe: () => bot.api.getMe(),
    handle: (update) => updates.handle(bot, update),
    // Each update makes one send, settled when its handler is.
    stats: () =>
      updates.statsOf(config.name, { settled: updates.finished, gaveUp: updates.failed }),
    close: async () => {
      updates.isClosed = true;
      // Calls still queued fail once their connection is gone: nothing of the run keeps going.
      await Promise.all(connections.map((connection) => connection.disconnect(false)));
    },
  };
}

serveRuns(startRun);

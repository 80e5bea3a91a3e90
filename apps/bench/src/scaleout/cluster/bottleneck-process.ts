// One process of the peer: a grammY bot whose API calls go through @grammyjs/transformer-throttler
// with Bottleneck's Redis clustering (every process's global, group and per-chat limiters share
// state under one id) and then @grammyjs/auto-retry. It gets its updates as a webhook behind a
// load balancer that routes by chat would hand them over (the parent sends them over IPC), runs
// them through `sequentialize` by chat and echoes each text. Configured by TELEPACE_PEER (JSON).

import { autoRetry } from "@grammyjs/auto-retry";
import { sequentialize } from "@grammyjs/runner";
import { apiThrottler } from "@grammyjs/transformer-throttler";
import type { Update } from "@grammyjs/types";
import type Bottleneck from "bottleneck";
import { Bot } from "grammy";
import Redis from "ioredis";
import { timeRoundTrip } from "./round-trip.js";

export interface PeerConfig {
  readonly name: string;
  readonly redisUrl: string;
  readonly apiRoot: string;
  readonly token: string;
  /** The Bottleneck id prefix of the run: every process of one run shares it. */
  readonly prefix: string;
}

/** What a peer process reports when asked. */
export interface PeerStats {
  readonly name: string;
  readonly received: number;
  readonly finished: number;
  readonly failed: number;
}

const config = JSON.parse(process.env.TELEPACE_PEER ?? "{}") as PeerConfig;
const redisUrl = new URL(config.redisUrl);
/** What every limiter gets on top of the throttler's own defaults: Bottleneck's clustering. */
const cluster = (id: string): Bottleneck.ConstructorOptions => ({
  datastore: "ioredis",
  clientOptions: { host: redisUrl.hostname, port: Number(redisUrl.port) },
  // Bottleneck requires "ioredis" from its own folder; hand it the module instead.
  Redis,
  id: `${config.prefix}-${id}`,
});
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

let received = 0;
let finished = 0;
let failed = 0;

process.on("message", (message: { type: string; update?: Update }) => {
  if (message.type === "update" && message.update !== undefined) {
    received++;
    bot
      .handleUpdate(message.update)
      .catch(() => {
        failed++;
      })
      .finally(() => {
        finished++;
      });
  }
  if (message.type === "stats") {
    const stats: PeerStats = { name: config.name, received, finished, failed };
    process.send?.({ type: "stats", stats });
  }
  if (message.type === "stop") process.exit(0);
});

await bot.init();
const roundTripMs = await timeRoundTrip(() => bot.api.getMe());
process.send?.({ type: "ready", roundTripMs });

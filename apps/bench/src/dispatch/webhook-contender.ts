// A webhook as a grammY bot author would wire it: `webhookCallback(bot, "http")` with
// `sequentialize` behind a node:http server on loopback, the simulator delivering to it. There is
// no getUpdates, so nothing caps a round trip at 100 updates; the simulator sends each chat's
// updates one at a time and up to `max_connections` requests at once, as Telegram does.

import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { sequentialize } from "@grammyjs/runner";
import { Bot, type Context, webhookCallback } from "grammy";
import type { PollerContender } from "./pollers.js";
import { principalConstraint } from "./workload.js";

/** Telegram's default `max_connections` of `setWebhook`. */
const DEFAULT_MAX_CONNECTIONS = 40;

/**
 * The webhook contender. The simulator's added latency covers Bot API calls, not its deliveries,
 * so the receiving server holds each request `roundTripMs` before grammY reads it: one round trip
 * per delivery, as between Telegram and a bot (`setTimeout`, in the bench, not in the contender).
 */
export function webhookContender(options: { roundTripMs: number }): PollerContender {
  return {
    name: `grammY webhookCallback + sequentialize (max_connections ${DEFAULT_MAX_CONNECTIONS}, its default)`,
    settings: { maxConnections: DEFAULT_MAX_CONNECTIONS, roundTripMs: options.roundTripMs },
    slots: DEFAULT_MAX_CONNECTIONS,
    isConfirmedAfterStore: true, // grammY answers once the middleware has run
    async start(link, process) {
      const bot = new Bot(link.sim.token, { client: { apiRoot: link.sim.apiRoot } });
      await bot.init();
      bot.use(sequentialize((ctx: Context) => principalConstraint(ctx.update)));
      bot.use((ctx: Context) => process(ctx.update));
      const handle = webhookCallback(bot, "http");
      const server = createServer((request, response) => {
        const deliver = (): void => {
          handle(request, response).catch(() => {
            if (!response.headersSent) response.writeHead(500);
            response.end();
          });
        };
        if (options.roundTripMs > 0) setTimeout(deliver, options.roundTripMs);
        else deliver();
      });
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      const { port } = server.address() as AddressInfo;
      await bot.api.setWebhook(`http://127.0.0.1:${port}/`);
      return {
        async stop() {
          await bot.api.deleteWebhook();
          server.closeAllConnections();
          server.close();
          return {
            rejected: 0,
            peakHeld: DEFAULT_MAX_CONNECTIONS,
            fetchedUpdates: 0,
            distinctFetched: 0,
          };
        },
      };
    },
  };
}

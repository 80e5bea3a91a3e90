// The fixture of the end-to-end tests: a time-scaled sim on loopback and a grammY Bot pointed at
// it with the telepace transformer, whose rates are scaled to match.

import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { Bot, type Context } from "grammy";
import {
  type StreamFlavor,
  type TelepaceOptions,
  type TelepaceTransformer,
  telepace,
} from "../src/index.js";

/** How much faster than Telegram the sim's limits (and the outbox's rates) run in these tests. */
export const SCALE = 20;

/** The outbox options of Telegram's pace, `SCALE` times faster (as in real time at the sim). */
export const scaledRates: TelepaceOptions = Object.freeze({
  privateChatRps: 1 * SCALE,
  groupChatRps: (20 / 60) * SCALE,
  globalRps: 30 * SCALE,
  pacingMarginMs: 100 / SCALE,
  retryBaseDelayMs: 1_000 / SCALE,
  retryMaxDelayMs: 30_000 / SCALE,
});

export interface Fixture {
  readonly sim: BotApiSim;
  readonly bot: Bot;
  readonly pace: TelepaceTransformer;
  close(): Promise<void>;
}

/** A sim (Telegram's limits ×SCALE unless given) and a bot with telepace installed. */
export async function fixture(
  options: TelepaceOptions = {},
  simOptions: Parameters<typeof start>[0] = {},
): Promise<Fixture> {
  const sim = await start({ timeScale: SCALE, ...simOptions });
  const bot = new Bot(sim.token, { client: { apiRoot: sim.apiRoot } });
  const pace = telepace({ ...scaledRates, ...options });
  bot.api.config.use(pace);
  return {
    sim,
    bot,
    pace,
    async close() {
      await pace.close({ drain: false, timeoutMs: 1_000 });
      await sim.close({ timeoutMs: 1_000 });
    },
  };
}

/** A bot of context `C` on the sim with telepace and its middleware, fed by hand. */
export interface StreamingBot<C extends Context> {
  readonly sim: BotApiSim;
  readonly bot: Bot<C>;
  readonly pace: TelepaceTransformer;
  /** Fetches what the sim has for the bot and handles it one by one, as bot.start() would. */
  deliver(): Promise<void>;
  close(): Promise<void>;
}

/** A sim, and a bot with the telepace transformer and `pace.middleware()` installed first. */
export async function streamingBot<C extends Context & StreamFlavor>(): Promise<StreamingBot<C>> {
  const sim = await start({ timeScale: SCALE });
  const bot = new Bot<C>(sim.token, { client: { apiRoot: sim.apiRoot } });
  const pace = telepace(scaledRates);
  bot.api.config.use(pace);
  bot.use(pace.middleware());
  let offset = 0;
  return {
    sim,
    bot,
    pace,
    async deliver() {
      if (!bot.isInited()) await bot.init();
      for (const update of await bot.api.getUpdates({ offset, timeout: 0 })) {
        offset = update.update_id + 1;
        await bot.handleUpdate(update);
      }
    },
    async close() {
      await pace.close({ drain: false, timeoutMs: 1_000 });
      await sim.close({ timeoutMs: 1_000 });
    },
  };
}

// The default run: start the Bot API sim on loopback, run the bot against it, play a crowd of
// simulated users for a bounded time, shut the bot down gracefully and report. Exit code 0 only
// when every expected reply arrived and Telegram's limits were never hit.

import { start } from "@telepace/bot-api-sim";
import { systemClock } from "@telepace/core";
import type { BotConfig } from "../config.js";
import { createLogger } from "../logger.js";
import { ReferenceBot } from "../reference-bot.js";
import { Crowd } from "./crowd.js";
import { formatReport, progressLine, summarize } from "./report.js";

/** Runs the demo; resolves with the process exit code. */
export async function runEmbeddedDemo(
  config: BotConfig,
  out: NodeJS.WriteStream = process.stderr,
): Promise<number> {
  const clock = systemClock;
  const startedAt = clock.now();
  const elapsedS = () => (clock.now() - startedAt) / 1000;
  const sim = await start();
  const logger = createLogger(config.logLevel, [sim.token]);
  const isTty = out.isTTY === true;
  out.write(
    `Bot API sim on ${sim.apiRoot} with Telegram's limits (1 msg/s per chat, 20/min per group, 30/s overall).\n` +
      `${config.crowd.users} users and ${config.crowd.groups} groups chat with the bot for ${config.crowd.durationS} s…\n`,
  );
  let bot: ReferenceBot | undefined;
  try {
    bot = await ReferenceBot.launch({ token: sim.token, apiRoot: sim.apiRoot, logger, clock });
    const running = bot;
    const crowd = new Crowd(sim, config.crowd, {
      isReachable: (chatId) => running.isReachable(chatId),
    });
    crowd.setup();
    let pollingFailed = false;
    running.polling.catch((error: unknown) => {
      pollingFailed = true;
      out.write(`\npolling stopped: ${error instanceof Error ? error.message : String(error)}\n`);
    });
    await crowd.run(() => {
      if (isTty)
        out.write(`\r${progressLine(elapsedS(), running.stats(), sim, crowd.expectations)}\x1b[K`);
    });
    if (isTty) out.write("\n");
    await running.stop({ timeoutMs: 10_000 });
    const summary = summarize(sim, crowd.expectations, crowd.chatIds());
    out.write(`${formatReport(summary, running.stats(), sim, crowd.expectations, elapsedS())}\n`);
    return !pollingFailed && summary.missing.length === 0 && summary.tooManyRequests === 0 ? 0 : 1;
  } finally {
    await bot?.stop();
    await sim.close();
  }
}

#!/usr/bin/env node

// Entry point: `node dist/main.js`. With TELEGRAM_BOT_TOKEN the bot serves the Bot API until
// SIGINT/SIGTERM; without it, it runs the embedded demo (sim + bot + a crowd of simulated users).

import { PollingStoppedError } from "@telepace/update-dispatch";
import { type BotConfig, ConfigError, readConfig, USAGE } from "./config.js";
import { BotExitedError } from "./demo/bot-process.js";
import { runEmbeddedDemo } from "./demo/embedded-demo.js";
import { runUiDemo } from "./demo/ui-demo.js";
import { createLogger, scrub } from "./logger.js";
import { describeJournal, ReferenceBot, StartupError } from "./reference-bot.js";
import { runSharedBot, type SharedBotReady } from "./shared-bot.js";
import { readSharedConfig, SHARED_USAGE, type SharedConfig } from "./shared-config.js";
import { SupervisorChannel } from "./supervisor-channel.js";

const STATS_INTERVAL_MS = 250;

async function runAgainstApi(config: BotConfig & { target: { kind: "api" } }): Promise<number> {
  const { token, apiRoot } = config.target;
  const logger = createLogger(config.logLevel, [token]);
  const supervisor = SupervisorChannel.fromEnv(process.env);
  const bot = await ReferenceBot.launch({
    token,
    apiRoot,
    logger,
    dataDir: config.dataDir,
    metricsPort: config.metricsPort,
    admins: config.admins,
    broadcastRate: config.broadcastRate,
    onEvent: supervisor && ((event) => supervisor.send(event)),
  });
  const journal = describeJournal(bot.journal);
  let statsTimer: NodeJS.Timeout | undefined;
  const metrics = bot.metricsUrl === undefined ? "" : `Metrics: ${bot.metricsUrl}\n`;
  if (supervisor === undefined) {
    process.stderr.write(
      `@${bot.me.username} is running against ${apiRoot} on a ${journal}; Ctrl-C stops it.\n${metrics}`,
    );
  } else {
    const { unfinishedUpdates, leftoverJobs } = bot.startup;
    supervisor.send({
      type: "ready",
      pid: process.pid,
      journal,
      unfinishedUpdates,
      leftoverJobs,
      metricsUrl: bot.metricsUrl,
    });
    statsTimer = setInterval(() => {
      supervisor.send({ type: "stats", stats: bot.stats(), isFinal: false });
    }, STATS_INTERVAL_MS);
  }
  const stopSignal = new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  const ended = await Promise.race([
    stopSignal.then((name) => ({ kind: "signal" as const, name })),
    bot.polling.then(
      () => ({ kind: "stopped" as const }),
      (error: unknown) => ({ kind: "failed" as const, error }),
    ),
  ]);
  if (ended.kind === "signal") logger.info({ signal: ended.name }, "stop requested");
  const report = await bot.stop({ timeoutMs: 10_000 });
  clearInterval(statsTimer);
  supervisor?.send({ type: "stats", stats: bot.stats(), isFinal: true });
  if (ended.kind === "failed") {
    process.stderr.write(`${messageOf(ended.error)}\n`);
    return 1;
  }
  if (supervisor === undefined) {
    process.stderr.write(
      `Stopped cleanly (${report.unfinished} unfinished updates left in the journal for next time).\n`,
    );
  }
  return 0;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function runShared(
  config: BotConfig & { target: { kind: "api" } },
  shared: SharedConfig,
): Promise<number> {
  const { token, apiRoot } = config.target;
  const logger = createLogger(config.logLevel, [token]);
  const supervisor = SupervisorChannel.fromEnv(process.env);
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  process.once("SIGTERM", () => stop.abort());
  const say = (line: string): void => {
    process.stderr.write(`reference-bot: ${line}\n`);
  };
  for (const warning of shared.warnings) say(`Warning: ${warning}.`);
  const onReady = (ready: SharedBotReady): void => {
    const metrics = ready.metricsUrl === undefined ? "" : `Metrics: ${ready.metricsUrl}\n`;
    process.stderr.write(
      `@${ready.username} is running against ${apiRoot} as one of several processes (role ${shared.role}, shared through Redis); Ctrl-C stops it.\n${metrics}`,
    );
    supervisor?.send({
      type: "ready",
      pid: process.pid,
      journal: "the shared Redis queue",
      unfinishedUpdates: ready.unfinishedUpdates,
      leftoverJobs: ready.leftoverJobs,
      metricsUrl: ready.metricsUrl,
      workerId: ready.workerId,
    });
  };
  return runSharedBot(
    {
      ...shared,
      token,
      apiRoot,
      logger,
      metricsPort: config.metricsPort,
      say,
      onReady,
      onEvent: supervisor && ((event) => supervisor.send(event)),
    },
    stop.signal,
  );
}

async function main(): Promise<number> {
  let config: ReturnType<typeof readConfig>;
  let shared: SharedConfig | undefined;
  try {
    const split = readSharedConfig(process.argv.slice(2), process.env);
    shared = split.shared;
    config = readConfig(split.rest, process.env);
    if (shared !== undefined && !("help" in config) && config.target.kind !== "api") {
      throw new ConfigError(
        "Redis (REDIS_URL, --redis-url-file or --redis) runs one of several processes of a bot: set TELEGRAM_BOT_TOKEN",
      );
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`reference-bot: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if ("help" in config) {
    process.stdout.write(`${USAGE}\n\n${SHARED_USAGE}\n`);
    return 0;
  }
  const secrets = config.target.kind === "api" ? [config.target.token] : [];
  try {
    if (shared !== undefined) {
      return await runShared(config as BotConfig & { target: { kind: "api" } }, shared);
    }
    if (config.target.kind === "api") {
      return await runAgainstApi(config as BotConfig & { target: { kind: "api" } });
    }
    return await (config.ui ? runUiDemo(config) : runEmbeddedDemo(config));
  } catch (error) {
    // The demo's bot process said why it could not start; one line is enough.
    if (error instanceof BotExitedError && error.isExplained) return error.exit.code ?? 1;
    if (error instanceof StartupError || error instanceof PollingStoppedError) {
      process.stderr.write(`reference-bot: ${scrub(error.message, secrets)}\n`);
      return 1;
    }
    process.stderr.write(
      `reference-bot: unexpected failure: ${scrub(messageOf(error), secrets)}\n`,
    );
    return 1;
  }
}

const code = await main();
// Everything is closed by now; exit explicitly so a straggling keep-alive socket cannot hold on.
process.exit(code);

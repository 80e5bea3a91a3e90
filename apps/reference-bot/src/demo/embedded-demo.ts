// The default run: start the Bot API sim on loopback, run the bot against it in a child process on
// a durable journal, play a crowd of simulated users for a bounded time (killing the bot with
// SIGKILL once mid-job and starting it again), shut the bot down gracefully and report. Exit code 0
// only when every expected reply arrived, no update was lost and Telegram's limits were never hit.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { start } from "@telepace/bot-api-sim";
import { systemClock } from "@telepace/core";
import type { BotConfig } from "../config.js";
import { BotLedger } from "./bot-ledger.js";
import { BotProcess, demoBotOptions } from "./bot-process.js";
import { BroadcastScene, DEMO_BROADCAST_RATE } from "./broadcast-scene.js";
import { Crowd } from "./crowd.js";
import type { Expectation } from "./expectation.js";
import {
  type BotRun,
  type CrashRecord,
  type DemoSummary,
  formatReport,
  progressLine,
  summarize,
  updatesLost,
} from "./report.js";

/** Options of {@link runEmbeddedDemo}. */
export interface EmbeddedDemoOptions {
  /** Where the progress line (on a TTY) and the report go; logs stay on stderr. @defaultValue process.stdout */
  readonly out?: Pick<NodeJS.WriteStream, "write" | "isTTY"> | undefined;
  /** The command that runs the bot (see {@link BotProcess}). @defaultValue this process's */
  readonly botCommand?: readonly string[] | undefined;
}

/** What a demo run found, for its exit code and for tests. */
export interface DemoResult {
  /** 0 when every expected reply arrived, nothing was lost and no 429 was received. */
  readonly exitCode: number;
  readonly summary: DemoSummary;
  readonly run: BotRun;
  readonly expectations: readonly Expectation[];
  /** Updates the sim queued for the bot that no bot process finished handling. */
  readonly lost: number;
}

/** Runs the demo; resolves with the process exit code. */
export async function runEmbeddedDemo(
  config: BotConfig,
  options: EmbeddedDemoOptions = {},
): Promise<number> {
  return (await playDemo(config, options)).exitCode;
}

/** Runs the demo and writes its report; resolves with what it found. */
export async function playDemo(
  config: BotConfig,
  options: EmbeddedDemoOptions = {},
): Promise<DemoResult> {
  const out = options.out ?? process.stdout;
  const clock = systemClock;
  const startedAt = clock.now();
  const elapsedS = () => (clock.now() - startedAt) / 1000;
  const sim = await start();
  const dataDir = config.dataDir ?? (await mkdtemp(join(tmpdir(), "telepace-demo-")));
  const isTty = out.isTTY === true;
  const ledger = new BotLedger();
  const crashes: CrashRecord[] = [];
  let bot: BotProcess | undefined;
  let stopping = false;
  let pollingFailed = false;
  // Its admin exists before the bot starts: the bot is told who may /broadcast.
  const broadcast = new BroadcastScene(sim, config.crowd.seed, clock);
  const launch = async (): Promise<BotProcess> => {
    const started = await BotProcess.start({
      ...demoBotOptions(sim, config, dataDir, options.botCommand),
      admins: [broadcast.admin.id],
      broadcastRate: DEMO_BROADCAST_RATE,
      onMessage: (message) => ledger.record(message),
    });
    // The bot ends on its own only when polling cannot go on (it printed why).
    void started.exited.then(({ signal }) => {
      if (!stopping && signal !== "SIGKILL") pollingFailed = true;
    });
    return started;
  };
  try {
    bot = await launch();
    out.write(
      `Bot API sim on ${sim.apiRoot} with Telegram's limits (1 msg/s per chat, 20/min per group, 30/s overall).\n` +
        `The bot runs in process ${bot.ready.pid} on a ${bot.ready.journal}.\n` +
        (bot.ready.metricsUrl === undefined ? "" : `Its metrics: ${bot.ready.metricsUrl}\n`) +
        `${config.crowd.users} users and ${config.crowd.groups} groups chat with the bot for ${config.crowd.durationS} s…\n`,
    );
    const journal = bot.ready.journal;
    const crowd = new Crowd(
      sim,
      config.crowd,
      {
        isReachable: (chatId) => ledger.isReachable(chatId),
        restart: async () => {
          const killedAt = clock.now();
          await bot?.kill();
          bot = await launch();
          crashes.push({
            atS: (killedAt - startedAt) / 1000,
            restartMs: clock.now() - killedAt,
            replayed: bot.ready.unfinishedUpdates,
            leftoverJobs: bot.ready.leftoverJobs,
          });
        },
      },
      clock,
      broadcast,
    );
    crowd.setup();
    await crowd.run(() => {
      if (isTty) out.write(`\r${progressLine(elapsedS(), ledger, sim, crowd.expectations)}\x1b[K`);
    });
    if (isTty) out.write("\n");
    stopping = true;
    await bot.stop();
    const stats = ledger.stats();
    if (stats === undefined) throw new Error("the bot never reported its counters");
    const summary = summarize(sim, crowd.expectations, crowd.chatIds(), crowd.apiCalls);
    const run: BotRun = { stats, ledger, journal, crashes };
    out.write(`${formatReport(summary, run, sim, crowd.expectations, elapsedS())}\n`);
    const lost = updatesLost(sim, ledger);
    const isWhole =
      lost === 0 &&
      ledger.jobs().unaccounted === 0 &&
      ledger.progressEdits().unaccounted === 0 &&
      ledger.answers().unaccounted === 0 &&
      ledger.fetches().unexplained === 0;
    const isClean = !pollingFailed && summary.missing.length === 0 && summary.tooManyRequests === 0;
    const exitCode = isWhole && isClean ? 0 : 1;
    return { exitCode, summary, run, expectations: crowd.expectations, lost };
  } finally {
    stopping = true;
    await bot?.stop();
    await sim.close();
    if (config.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
  }
}

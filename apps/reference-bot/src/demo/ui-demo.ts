// `--ui`: the demo for a person instead of a crowd. The Bot API sim starts with its chat page, the
// bot runs against it in a child process on a durable journal, and a user "You" waits in a private
// chat with it; the page's URL is printed and both run until Ctrl-C (SIGINT/SIGTERM).

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { start } from "@telepace/bot-api-sim";
import type { BotConfig } from "../config.js";
import { BotProcess, demoBotOptions } from "./bot-process.js";

/** Options of {@link runUiDemo}. */
export interface UiDemoOptions {
  /** Where the page's URL goes. @defaultValue process.stdout */
  readonly out?: Pick<NodeJS.WriteStream, "write"> | undefined;
  /** The command that runs the bot (see {@link BotProcess}). @defaultValue this process's */
  readonly botCommand?: readonly string[] | undefined;
}

/** Runs until SIGINT/SIGTERM; resolves with the exit code (1 when the bot stopped on its own). */
export async function runUiDemo(config: BotConfig, options: UiDemoOptions = {}): Promise<number> {
  const out = options.out ?? process.stdout;
  const sim = await start();
  const dataDir = config.dataDir ?? (await mkdtemp(join(tmpdir(), "telepace-ui-")));
  let bot: BotProcess | undefined;
  try {
    bot = await BotProcess.start({
      ...demoBotOptions(sim, config, dataDir, options.botCommand),
      onMessage: () => {},
    });
    // A first chat, so the page opens on one: type /help there.
    sim.chats.createPrivate(sim.users.create({ firstName: "You" }));
    out.write(
      `Bot API sim with Telegram's limits on ${sim.apiRoot}; @${sim.bot.username} runs in process ${bot.ready.pid}.\n` +
        `Open the chat page to talk to it: ${sim.pageUrl}\n` +
        "Ctrl-C stops the bot and the sim.\n",
    );
    const ended = await new Promise<"signal" | "bot">((resolve) => {
      process.once("SIGINT", () => resolve("signal"));
      process.once("SIGTERM", () => resolve("signal"));
      void bot?.exited.then(() => resolve("bot"));
    });
    return ended === "signal" ? 0 : 1;
  } finally {
    await bot?.stop();
    await sim.close();
    if (config.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
  }
}

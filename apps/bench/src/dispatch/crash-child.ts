// The bot process of the crash scenario, started (and SIGKILLed) by crash.ts: it long-polls the
// parent's simulator with telepace's UpdateIntake over a file journal, or with grammY runner, and
// appends the stream position of every update it finished to a file with a plain write, which
// outlives the process. Loaded, it waits for a line on stdin before it opens its journal and
// polls, so the process that takes over can be started before the kill.

import { once } from "node:events";
import { closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import { run, sequentialize } from "@grammyjs/runner";
import { FileUpdateJournal } from "@telepace/journal-file";
import { UpdateIntake } from "@telepace/update-dispatch";
import { Bot, type Context } from "grammy";
import { simIndexOf } from "./sim-link.js";
import { makeUpdateStream, principalConstraint, type StreamOptions } from "./workload.js";

/** What the parent passes as the first argument, as JSON. */
export interface CrashChildConfig {
  readonly kind: "intake" | "runner";
  readonly apiRoot: string;
  readonly token: string;
  readonly concurrency: number;
  /** The stream the simulator holds (rebuilt here for each update's simulated I/O). */
  readonly stream: StreamOptions;
  readonly journalDirectory: string;
  readonly completionsPath: string;
  /** Written once the process polls: the parent's quiet period counts from then. */
  readonly readyPath: string;
}

type GrammySignal = Parameters<Bot["api"]["getUpdates"]>[1];
type GrammyGetUpdatesParams = Parameters<Bot["api"]["getUpdates"]>[0];

async function main(config: CrashChildConfig): Promise<void> {
  const stream = makeUpdateStream(config.stream);
  const completions = openSync(config.completionsPath, "a");
  const finish = async (ctx: Context): Promise<void> => {
    const index = simIndexOf(ctx.update);
    await new Promise((resolve) => setTimeout(resolve, stream.ioMs[index] as number));
    writeSync(completions, `${index}\n`);
  };
  const bot = new Bot(config.token, { client: { apiRoot: config.apiRoot } });
  await bot.init();
  await once(process.stdin, "data");
  process.stdin.destroy();
  if (config.kind === "runner") {
    bot.use(sequentialize((ctx: Context) => principalConstraint(ctx.update)));
    bot.use(finish);
    run(bot, { sink: { concurrency: config.concurrency }, runner: { silent: true } });
    writeFileSync(config.readyPath, "");
    return;
  }
  bot.use(finish);
  const journal = await FileUpdateJournal.open(config.journalDirectory);
  const intake = new UpdateIntake((update) => bot.handleUpdate(update), {
    getUpdates: (params, { signal }) =>
      bot.api.getUpdates({ ...params } as GrammyGetUpdatesParams, signal as GrammySignal),
    journal,
    dispatcher: { maxConcurrency: config.concurrency },
  });
  try {
    const running = intake.run();
    writeFileSync(config.readyPath, "");
    await running;
  } finally {
    closeSync(completions);
  }
}

main(JSON.parse(process.argv[2] ?? "{}") as CrashChildConfig).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

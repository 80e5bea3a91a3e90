#!/usr/bin/env node
// The telepace-bot-api-sim command: starts the simulator, prints where it listens, and runs
// until SIGINT or SIGTERM. Bad flags print the usage and exit with status 2.

import { readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { start } from "../start.js";
import { parseCliArgs, USAGE } from "./cli-args.js";

function version(): string {
  try {
    const root = join(dirname(realpathSync(process.argv[1] ?? ".")), "..");
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      version?: string;
    };
    return pkg.version ?? "unknown";
  } catch {
    return "unknown";
  }
}

async function main(): Promise<number> {
  const command = parseCliArgs(process.argv.slice(2));
  if (command.kind === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command.kind === "version") {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (command.kind === "error") {
    process.stderr.write(`telepace-bot-api-sim: ${command.message}\n\n${USAGE}\n`);
    return 2;
  }
  let sim: Awaited<ReturnType<typeof start>>;
  try {
    sim = await start(command.options);
  } catch (error) {
    process.stderr.write(`telepace-bot-api-sim: ${(error as Error).message}\n`);
    return 1;
  }
  if (command.json) {
    const line = {
      apiRoot: sim.apiRoot,
      controlRoot: sim.controlRoot,
      pageUrl: sim.pageUrl,
      tokens: sim.tokens,
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  } else {
    process.stdout.write(`apiRoot ${sim.apiRoot}\n`);
    for (const token of sim.tokens) process.stdout.write(`token ${token}\n`);
    process.stdout.write(`control ${sim.controlRoot}\n`);
    process.stdout.write(`page ${sim.pageUrl}\n`);
  }
  const running = sim;
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        // A second signal means "now": give up on the graceful close.
        resolve(signal === "SIGINT" ? 130 : 143);
        return;
      }
      stopping = true;
      running.close().then(
        () => resolve(0),
        () => resolve(1),
      );
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`telepace-bot-api-sim: ${(error as Error)?.message ?? String(error)}\n`);
    process.exit(1);
  },
);

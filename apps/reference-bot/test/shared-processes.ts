// What the tests of a bot run as several processes share: the line a process prints once it
// serves, and the sims, Redis servers and bot processes a test starts, each closed (a process
// still running killed with SIGKILL) after the test, the latest first.

import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { startRedis } from "@telepace/testing";
import { afterEach } from "vitest";
import { type BotChild, spawnBot } from "./harness.js";

/** What a process of several prints once it serves. */
export const RUNNING = /^@\w+ is running against .* as one of several processes/;

/** Starts things for one test file's tests and registers their ends with `afterEach`. */
export function sharedProcesses() {
  const cleanup: (() => Promise<unknown> | undefined)[] = [];
  afterEach(async () => {
    for (const close of cleanup.splice(0).reverse()) await close();
  });
  return {
    /** Runs `close` after the test (before what was registered earlier). */
    onCleanup(close: () => Promise<unknown> | undefined): void {
      cleanup.push(close);
    },
    async sim(): Promise<BotApiSim> {
      const started = await start();
      cleanup.push(() => started.close());
      return started;
    },
    /**
     * A redis-server of the test's own: every sim's bot has the same id, so processes of an
     * earlier test would leave it their queue (a higher update id, unfinished updates, leases).
     */
    async freshRedis(): Promise<string> {
      const server = await startRedis();
      cleanup.push(() => server.stop());
      return server.url;
    },
    /** The bot's entry point against `on`, the Redis URL in its environment. */
    bot(on: BotApiSim, redisUrl: string, args: readonly string[] = []): BotChild {
      const child = spawnBot(on, args, { REDIS_URL: redisUrl });
      cleanup.push(() => {
        if (child.child.exitCode === null) child.child.kill("SIGKILL");
        return child.exited;
      });
      return child;
    },
  };
}

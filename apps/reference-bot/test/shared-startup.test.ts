// How a process of a bot run as several starts against the Redis it is given: it says it serves
// only once Redis has answered; a refused password ends it with one line that never shows the
// password; a Redis that keeps nothing on disk is named loudly (and refused with --redis-strict);
// a Redis not up yet is waited for. The URL comes from REDIS_URL, not the command line.

import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BotApiSim } from "@telepace/bot-api-sim";
import { describeWithRedis, startRedis } from "@telepace/testing";
import { expect, it } from "vitest";
import { type BotChild, eventually } from "./harness.js";
import { RUNNING, sharedProcesses } from "./shared-processes.js";

const { onCleanup, sim, bot } = sharedProcesses();

/** SIGTERM once the process polls (a stop while it takes the poller lease waits out a poll). */
async function stopWhenPolling(on: BotApiSim, child: BotChild): Promise<void> {
  await eventually("polling", () => (on.counters().calls.getUpdates ?? 0) > 0);
  child.child.kill("SIGTERM");
  expect(await child.exited).toBe(0);
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

describeWithRedis("a --redis process at start", (server) => {
  it("a refused password ends the start with one line, before any 'is running', never showing it", async () => {
    const secured = await startRedis({ args: ["--requirepass", "right-Pa55"] });
    onCleanup(() => secured.stop());
    const child = bot(await sim(), `redis://:wrong-Pa55@127.0.0.1:${secured.port}`);
    expect(await child.exited).toBe(1);
    // The client may first see its connection closed on the refusal (a "Waiting" line), then
    // the refusal itself: WRONGPASS, or NOAUTH for the command it sent unauthenticated after it.
    expect(child.printed.at(-1)).toMatch(
      /^reference-bot: Redis refused the (user name or password for the durability check \(WRONGPASS\): check the credentials|durability check without a valid password \(NOAUTH\): check the password) in the Redis URL$/,
    );
    expect(child.printed.slice(0, -1).every((line) => /Waiting for Redis/.test(line))).toBe(true);
    expect(child.printed.join("\n")).not.toMatch(/Pa55/);
    expect(child.child.spawnargs.join(" ")).not.toContain("Pa55");
  }, 30_000);

  it("a Redis that keeps nothing on disk is named loudly before it serves; --redis-strict refuses it", async () => {
    const on = await sim();
    const loose = bot(on, server().url);
    await loose.line(RUNNING);
    expect(loose.printed).toHaveLength(3);
    expect(loose.printed.slice(0, 2)).toEqual([
      "reference-bot: Warning: Redis keeps nothing on disk (appendonly no, no snapshots): a restart of Redis loses every stored update, though Telegram was told they arrived, and the groups' pacing.",
      `reference-bot: Warning: this Redis may forget updates the bot confirmed to Telegram; see "Operating Redis" in @telepace/redis's README (--redis-strict refuses such a Redis).`,
    ]);
    await stopWhenPolling(on, loose);
    const strict = bot(on, server().url, ["--redis-strict"]);
    expect(await strict.exited).toBe(1);
    expect(strict.printed).toEqual([
      `reference-bot: Refusing to start (--redis-strict): Redis keeps nothing on disk (appendonly no, no snapshots): a restart of Redis loses every stored update, though Telegram was told they arrived, and the groups' pacing. See "Operating Redis" in @telepace/redis's README`,
    ]);
  }, 30_000);

  it("an append-only Redis starts without a warning, strict or not", async () => {
    const dir = mkdtempSync(join(tmpdir(), "telepace-aof-bot-"));
    onCleanup(() => {
      rmSync(dir, { recursive: true, force: true });
      return undefined;
    });
    const durable = await startRedis({ args: ["--appendonly", "yes", "--dir", dir] });
    onCleanup(() => durable.stop());
    const on = await sim();
    const child = bot(on, durable.url, ["--redis-strict"]);
    await child.line(RUNNING);
    expect(child.printed).toHaveLength(1);
    await stopWhenPolling(on, child);
  }, 30_000);

  it("a Redis not up yet is waited for: the process serves once it answers", async () => {
    const port = await freePort();
    const on = await sim();
    const child = bot(on, `redis://127.0.0.1:${port}`);
    await child.line(
      /^reference-bot: Waiting for Redis at the Redis URL \(REDIS_URL, --redis-url-file or --redis\) to answer…$/,
    );
    expect(child.printed.some((line) => RUNNING.test(line))).toBe(false);
    const late = await startRedis({ port });
    onCleanup(() => late.stop());
    await child.line(RUNNING);
    await stopWhenPolling(on, child);
  }, 30_000);
});

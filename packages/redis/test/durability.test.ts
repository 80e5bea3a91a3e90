// What a Redis keeps of what it acknowledged, checked the way a bot checks it at start, and what a
// `kill -9` of Redis then costs: with an append-only file every stored update is still there
// after the restart; without one, all of them are gone.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { redisSuiteMode, startRedis } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import { RedisUpdateQueue } from "../src/index.js";
import { message } from "./support/updates.js";

const run = redisSuiteMode(["Redis durability"]) === "run" ? describe : describe.skip;
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** A server started with `args`, and a queue on it; both go at the end of the test. */
async function serverWith(args: readonly string[]) {
  const server = await startRedis({ args });
  const queue = new RedisUpdateQueue({ redis: server.url, botId: 1 });
  cleanup.push(
    () => server.stop(),
    () => queue.close(),
  );
  return { server, queue };
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "telepace-aof-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

run("Redis durability", () => {
  it("no append-only file and no snapshots: a restart loses every stored update", async () => {
    const { queue } = await serverWith([]);
    const report = await queue.checkDurability();
    expect(report).toMatchObject({
      persistence: "none",
      appendfsync: "everysec",
      maxmemoryBytes: 0,
      maxmemoryPolicy: "noeviction",
      replicas: 0,
      unchecked: [],
    });
    expect(report.problems).toEqual([
      "Redis keeps nothing on disk (appendonly no, no snapshots): a restart of Redis loses every stored update, though Telegram was told they arrived, and the groups' pacing",
    ]);
  });

  it("an append-only file with eviction off: nothing wanting", async () => {
    const { queue } = await serverWith(["--appendonly", "yes", "--dir", tempDir()]);
    expect(await queue.checkDurability()).toMatchObject({
      persistence: "aof",
      appendfsync: "everysec",
      problems: [],
      unchecked: [],
    });
  });

  it("snapshots only, or eviction at maxmemory: each said in one sentence", async () => {
    const rdb = await serverWith(["--save", "60 1", "--dir", tempDir()]);
    const rdbReport = await rdb.queue.checkDurability();
    expect(rdbReport.persistence).toBe("rdb");
    expect(rdbReport.problems).toEqual([
      "Redis keeps only snapshots (appendonly no): a crash of Redis loses what was stored since the last snapshot, though Telegram was told it arrived",
    ]);
    const lru = await serverWith([
      "--appendonly",
      "yes",
      "--dir",
      tempDir(),
      "--maxmemory",
      "100mb",
      "--maxmemory-policy",
      "allkeys-lru",
    ]);
    expect((await lru.queue.checkDurability()).problems).toEqual([
      "Redis may evict keys at maxmemory (maxmemory-policy allkeys-lru): stored updates, leases and pacing can vanish; set maxmemory-policy noeviction",
    ]);
  });

  it("CONFIG disabled (as on managed Redis): INFO still tells, the rest is unchecked", async () => {
    const withAof = await serverWith([
      "--appendonly",
      "yes",
      "--dir",
      tempDir(),
      "--rename-command",
      "CONFIG",
      "",
    ]);
    expect(await withAof.queue.checkDurability()).toMatchObject({
      persistence: "aof",
      appendfsync: undefined,
      problems: [],
      unchecked: ["save", "appendfsync"],
    });
    const without = await serverWith(["--rename-command", "CONFIG", ""]);
    const report = await without.queue.checkDurability();
    expect(report.persistence).toBeUndefined();
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatch(/^Redis has no append-only file \(appendonly no\)/);
  });

  it("kill -9 of Redis: with an append-only file the stored updates are all there after the restart, without one none is", async () => {
    for (const aof of [true, false]) {
      const dir = tempDir();
      const args = ["--appendonly", aof ? "yes" : "no", "--dir", dir];
      const first = await startRedis({ args });
      const before = new RedisUpdateQueue({ redis: first.url, botId: 1 });
      const updates = Array.from({ length: 150 }, (_, i) => message(i + 1, 1 + (i % 30)));
      for (let i = 0; i < updates.length; i += 50) await before.append(updates.slice(i, i + 50));
      expect(await before.unfinished()).toBe(150);
      await before.close();
      await first.kill();
      const again = await startRedis({ port: first.port, args });
      const after = new RedisUpdateQueue({ redis: again.url, botId: 1 });
      try {
        expect(await after.unfinished()).toBe(aof ? 150 : 0);
        expect(await after.highestUpdateId()).toBe(aof ? 150 : undefined);
        const claim = await after.claim("w", 1_000);
        expect(claim?.update.update_id).toBe(aof ? 1 : undefined);
      } finally {
        await after.close();
        await again.stop();
      }
    }
  });
});

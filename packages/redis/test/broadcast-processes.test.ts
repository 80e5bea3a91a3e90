// A broadcast shared by three processes over Redis, one of them SIGKILLed mid-way: its batches
// are taken over once their leases run out. Nobody is missed; nobody gets it twice except sends
// found started in a batch taken over (in flight at the kill, or at a lease that ran out on a
// process too busy to renew it), which the taker reports as resent.

import { fork } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { start } from "@telepace/bot-api-sim";
import type { BroadcastReport } from "@telepace/broadcast";
import { childProcesses, describeWithRedis } from "@telepace/testing";
import { Redis } from "ioredis";
import { afterEach, expect, it } from "vitest";
import { botIdOf } from "../src/index.js";

const WORKER = fileURLToPath(new URL("./fixtures/broadcast-worker.ts", import.meta.url));
const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
const children = childProcesses();
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await children.killAll();
  for (const close of cleanup.splice(0).reverse()) await close();
});

type Message = { type: string; settled?: number; chatId?: number; report?: BroadcastReport };

describeWithRedis("a broadcast over Redis across processes", (server) => {
  it("loses no one when a worker is killed: its batches are taken over, repeats only in flight", async () => {
    const sim = await start({ paidBroadcasts: true });
    cleanup.push(() => sim.close());
    const recipients = Array.from({ length: 1_200 }, () => {
      const user = sim.users.create();
      sim.chats.createPrivate(user);
      return user.id;
    });
    const dir = await mkdtemp(path.join(tmpdir(), "telepace-broadcast-redis-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const recipientsFile = path.join(dir, "recipients.json");
    await writeFile(recipientsFile, JSON.stringify(recipients));
    const resent = new Set<number>();
    const workers = ["w1", "w2", "w3"].map((workerId) => {
      const child = children.track(
        fork(WORKER, [server().url, sim.apiRoot, sim.token, recipientsFile, workerId], {
          cwd: PACKAGE,
          execArgv: ["--conditions=@telepace/source", "--import", "tsx"],
          stdio: ["ignore", "inherit", "inherit", "ipc"],
        }),
      );
      const reports = new Promise<BroadcastReport>((resolve, reject) => {
        child.on("message", (m: Message) => {
          if (m.type === "report" && m.report !== undefined) resolve(m.report);
          if (m.type === "resent" && m.chatId !== undefined) resent.add(m.chatId);
        });
        child.once("exit", (code, signal) => {
          if (signal !== "SIGKILL") reject(new Error(`${workerId} exited (${code}) first`));
        });
      });
      return { child, reports };
    });
    const victim = workers[0] as (typeof workers)[number];
    void victim.reports.catch(() => {});
    // A third of the way through (every process has batches then), kill the first one.
    let victimSettled = 0;
    victim.child.on("message", (m: Message) => {
      if (m.type === "settled") victimSettled = m.settled ?? 0;
    });
    while (sim.counters().messagesSent < 400 || victimSettled === 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const killed = once(victim.child, "exit");
    victim.child.kill("SIGKILL");
    await killed;

    // Started, no outcome, at the kill: the only sends that may arrive twice.
    const redis = new Redis(server().url);
    cleanup.push(() => redis.quit());
    const inFlight = new Set<number>();
    const batchKeys = await redis.keys(`telepace:{${botIdOf(sim.token)}}:bc:shared:b:*`);
    for (const key of batchKeys) {
      for (const [position, record] of Object.entries(await redis.hgetall(key))) {
        if (record === "s") inFlight.add(recipients[Number(position)] as number);
      }
    }

    const reports = await Promise.all(workers.slice(1).map((worker) => worker.reports));
    for (const report of reports) {
      expect(report).toMatchObject({ status: "completed", counts: { sent: 1_200 } });
    }
    const counts = recipients.map((id) => sim.transcript(id).messages.length);
    expect(recipients.filter((_, index) => counts[index] === 0)).toEqual([]);
    const twice = recipients.filter((_, index) => (counts[index] as number) > 1);
    expect(twice.filter((id) => !resent.has(id))).toEqual([]);
    // Only sends started, with no outcome, when a batch changed hands are sent again: those of
    // the killed process (in Redis at the kill) and of a lease that ran out under load.
    expect(resent.size).toBeLessThanOrEqual(inFlight.size + 100);
    expect(reports[0]?.counts.resentAfterCrash).toBe(resent.size);
    expect(sim.counters().tooManyRequests).toBe(0);
  }, 120_000);
});

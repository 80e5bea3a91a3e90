// A Redis that stalls (`DEBUG SLEEP`, `CLIENT PAUSE`) longer than the client waits for an answer
// (2 s): the client gives up, Redis runs the command when it wakes. A claim asked again under the
// same claim id takes up what the lost call leased, and a completion asked again is a completion,
// not a lost lease.

import type { Update } from "@grammyjs/types";
import { describeWithRedis, eventually, spyLogger } from "@telepace/testing";
import { Redis } from "ioredis";
import { afterEach, expect, it } from "vitest";
import { RedisUpdateQueue, SharedUpdateWorker } from "../src/index.js";
import { message, sleep } from "./support/updates.js";

let bots = 900;
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describeWithRedis(
  "a Redis that stalls past the client's timeout",
  (server) => {
    const queueFor = (botId: number) => {
      const queue = new RedisUpdateQueue({ redis: server().url, botId });
      cleanup.push(() => queue.close());
      return queue;
    };
    /** A second connection that stalls the server; resolves when the stall is over. */
    const stall = (...command: string[]): Promise<unknown> => {
      const admin = new Redis(server().url);
      cleanup.push(() => admin.quit());
      return admin.call(command[0] as string, ...command.slice(1));
    };

    it("a claim asked again under its claim id answers what the timed-out call leased", async () => {
      const queue = queueFor(++bots);
      await queue.append([message(1, 7)]);
      const asleep = stall("DEBUG", "SLEEP", "3");
      await sleep(50);
      await expect(queue.claim("w1", 20_000, { claimId: "first" })).rejects.toMatchObject({
        code: "ERR_REDIS_CONNECTION",
      });
      await asleep;
      // Redis ran the lost call when it woke: the person is leased to w1.
      expect(await queue.ownedBy("w1")).toBe(1);
      const again = await queue.claim("w1", 20_000, { claimId: "first" });
      expect(again).toMatchObject({ deliveries: 1, token: "w1:first" });
      expect(again?.update.update_id).toBe(1);
      expect(await queue.claim("w2", 20_000)).toBeUndefined();
      expect(await queue.complete(again as never)).toBe(true);
      expect(await queue.unfinished()).toBe(0);
      // A fresh claim id after the answer: the next claim is a new one.
      await queue.append([message(2, 7)]);
      expect((await queue.claim("w1", 20_000, { claimId: "second" }))?.update.update_id).toBe(2);
    }, 15_000);

    it("a worker whose claim timed out during DEBUG SLEEP runs the update when Redis wakes, not a lease later", async () => {
      const queue = queueFor(++bots);
      const own = queueFor(bots);
      // The worker's connection has checked the server and loaded the claim script: the claim
      // that times out is the one Redis runs when it wakes.
      expect(await own.claim("warm-up", 1_000)).toBeUndefined();
      const ran: [number, number][] = [];
      const worker = new SharedUpdateWorker(
        own,
        (update: Update) => {
          ran.push([update.update_id, performance.now()]);
        },
        { idleMs: 5, leaseMs: 20_000 },
      );
      cleanup.push(() => worker.close({ timeoutMs: 0 }));
      await queue.append([message(1, 7)]);
      const started = performance.now();
      const asleep = stall("DEBUG", "SLEEP", "3");
      await sleep(50);
      void worker.run();
      await asleep;
      await eventually("the update ran", () => ran.length === 1, { timeoutMs: 5_000 });
      // Redis woke after 3 s; the lease would have held the person for 20 s.
      expect((ran[0] as [number, number])[1] - started).toBeLessThan(6_000);
      await eventually("completed", () => worker.snapshot().completed === 1, { timeoutMs: 5_000 });
      expect(worker.snapshot()).toMatchObject({ claimed: 1, leasesLost: 0 });
      expect(worker.snapshot().queueFailures).toBeGreaterThanOrEqual(1);
    }, 15_000);

    it("a completion asked again after CLIENT PAUSE timed it out is a completion, not a lost lease", async () => {
      const queue = queueFor(++bots);
      await queue.append([message(1, 7), message(2, 7)]);
      const claim = await queue.claim("w1", 20_000);
      const paused = stall("CLIENT", "PAUSE", "3000", "WRITE");
      await paused;
      await expect(queue.complete(claim as never)).rejects.toMatchObject({
        code: "ERR_REDIS_CONNECTION",
      });
      await sleep(1_200);
      expect(await queue.unfinished()).toBe(1);
      expect(await queue.complete(claim as never)).toBe(true);
      // The person goes on with the next update.
      expect((await queue.claim("w2", 20_000))?.update.update_id).toBe(2);
    }, 15_000);

    it("a worker whose completion timed out counts it completed and logs no lost lease", async () => {
      const queue = queueFor(++bots);
      const logger = spyLogger();
      let pause: Promise<unknown> | undefined;
      const worker = new SharedUpdateWorker(
        queueFor(bots),
        () => {
          // Redis pauses writes just as this update finishes: its completion times out.
          pause = stall("CLIENT", "PAUSE", "2500", "WRITE");
          return pause;
        },
        { idleMs: 5, leaseMs: 20_000, logger },
      );
      cleanup.push(() => worker.close({ timeoutMs: 0 }));
      void worker.run();
      await queue.append([message(1, 7)]);
      await eventually("completed", () => worker.snapshot().completed === 1, {
        timeoutMs: 10_000,
      });
      expect(worker.snapshot()).toMatchObject({ leasesLost: 0, completed: 1 });
      // The first completion did time out.
      expect(worker.snapshot().queueFailures).toBeGreaterThanOrEqual(1);
      expect(logger.calls.map((call) => call.message)).not.toContain(
        "Lost the lease of an update; another worker runs it (or ran it) again",
      );
      expect(await queue.unfinished()).toBe(0);
    }, 15_000);

    it("a completion of a claim whose lease passed to another worker is lost, and says so", async () => {
      const queue = queueFor(++bots);
      await queue.append([message(1, 7)]);
      const stale = await queue.claim("w1", 100);
      await sleep(150);
      const current = await queue.claim("w2", 20_000);
      expect(current?.deliveries).toBe(2);
      expect(await queue.complete(stale as never)).toBe(false);
      expect(await queue.complete(current as never)).toBe(true);
      // Finished elsewhere: still not a completion of the stale claim.
      expect(await queue.complete(stale as never)).toBe(false);
    });
  },
  { args: ["--enable-debug-command", "local"] },
);

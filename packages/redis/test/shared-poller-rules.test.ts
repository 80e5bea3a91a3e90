// SharedPoller follows the intake's polling rules, on a real redis-server: a 429 waits its
// retry_after on the clock, 409 and 401 stop run() (and give the lease up), and update ids that
// restart lower make the queue forget the old ones, end to end against the Bot API simulator.

import type { Update } from "@grammyjs/types";
import { start } from "@telepace/bot-api-sim";
import { TelegramClient } from "@telepace/client";
import { ManualClock } from "@telepace/core";
import { describeWithRedis, eventually, privateCrowd } from "@telepace/testing";
import { afterEach, expect, it } from "vitest";
import { RedisUpdateQueue, SharedPoller, SharedUpdateWorker } from "../src/index.js";
import { message, until } from "./support/updates.js";

let bots = 500;
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** An error shaped like a Bot API envelope's (grammY's GrammyError carries the same fields). */
function apiError(errorCode: number, retryAfterS?: number): Error {
  return Object.assign(new Error(`getUpdates failed (${errorCode})`), {
    error_code: errorCode,
    parameters: retryAfterS === undefined ? {} : { retry_after: retryAfterS },
  });
}

describeWithRedis("SharedPoller's polling rules", (server) => {
  const queueFor = (botId: number, maxUnfinished?: number) => {
    const queue = new RedisUpdateQueue({
      redis: server().url,
      botId,
      ...(maxUnfinished === undefined ? {} : { maxUnfinished }),
    });
    cleanup.push(() => queue.close());
    return queue;
  };

  it("restartIds forgets the stored ids and the highest, refused while an update is unfinished", async () => {
    const queue = queueFor(++bots);
    await queue.append([message(50, 1), message(51, 2)]);
    expect(await queue.restartIds()).toBe(false);
    for (;;) {
      const claim = await queue.claim("w", 10_000);
      if (claim === undefined) break;
      await queue.complete(claim);
    }
    expect(await queue.append([message(50, 1)])).toMatchObject({ duplicates: 1 });
    expect(await queue.restartIds()).toBe(true);
    expect(await queue.highestUpdateId()).toBeUndefined();
    const again = await queue.append([message(50, 1), message(3, 2)]);
    expect(again).toMatchObject({ duplicates: 0, highestUpdateId: 50 });
    expect(again.appended.map((update) => update.update_id)).toEqual([3, 50]);
  });

  it("sleeps out a 429's retry_after on its clock", async () => {
    const clock = new ManualClock();
    const calls: (number | undefined)[] = [];
    let answered = false;
    const poller = new SharedPoller(queueFor(++bots), {
      clock,
      leaseMs: 60_000,
      getUpdates: async (params, { signal }) => {
        calls.push(params.offset);
        if (calls.length === 1) throw apiError(429, 3);
        if (!answered) {
          answered = true;
          return [message(1, 1)];
        }
        await new Promise((_, reject) => signal.addEventListener("abort", reject));
        return [];
      },
    });
    cleanup.push(() => poller.close());
    void poller.run();
    await eventually("the 429", () => poller.snapshot().rateLimited === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls).toHaveLength(1); // no second call before retry_after on the clock
    await clock.advance(3_000);
    await eventually("stored after the wait", () => poller.snapshot().appended === 1);
    // The next poll starts after the append settles, on its own turn of the loop.
    await eventually("the next poll", () => calls.length === 3);
    expect(calls).toEqual([undefined, undefined, 2]);
  });

  it.each([
    [409, "ERR_POLLING_CONFLICT"],
    [401, "ERR_POLLING_UNAUTHORIZED"],
  ])("stops on %i, rejecting run() with %s, and gives the lease up", async (errorCode, code) => {
    const bot = ++bots;
    let calls = 0;
    const stopped = new SharedPoller(queueFor(bot), {
      pollerId: "stopped",
      leaseMs: 60_000,
      getUpdates: async () => {
        calls++;
        throw apiError(errorCode);
      },
    });
    cleanup.push(() => stopped.close());
    await expect(stopped.run()).rejects.toMatchObject({ name: "PollingStoppedError", code });
    expect(calls).toBe(1);
    expect(stopped.snapshot().isLeader).toBe(false);
    // The lease was released: another poller takes it at once, not after 60 s.
    const next = new SharedPoller(queueFor(bot), {
      pollerId: "next",
      getUpdates: async (_params, { signal }) =>
        new Promise((_, reject) => signal.addEventListener("abort", reject)),
    });
    cleanup.push(() => next.close());
    void next.run();
    await eventually("the next poller leads", () => next.snapshot().isLeader, { timeoutMs: 1_000 });
  });

  it("update ids that restart lower, against the simulator: every new update once, in order", async () => {
    await using sim = await start({ rateLimits: false });
    const client = new TelegramClient({ token: sim.token, apiRoot: sim.apiRoot });
    cleanup.push(() => client.close());
    const bot = ++bots;
    const crowd = privateCrowd(sim, 5);
    const seen: Update[] = [];
    const worker = new SharedUpdateWorker(queueFor(bot), (update) => void seen.push(update), {
      idleMs: 2,
    });
    cleanup.push(() => worker.close());
    void worker.run();
    const poller = new SharedPoller(queueFor(bot), {
      getUpdates: (params, options) => client.getUpdates(params, options),
      pollTimeoutSeconds: 1,
    });
    cleanup.push(() => poller.close());
    void poller.run();
    crowd.send(50, "before");
    await eventually("the first 50", () => expect(seen).toHaveLength(50));
    const queue = queueFor(bot);
    await until("all completed", async () => (await queue.unfinished()) === 0);
    await eventually("all confirmed", () => expect(sim.pendingUpdates()).toBe(0));
    const firstId = Math.min(...seen.map((update) => update.update_id));
    const pollsBefore = sim.counters().calls.getUpdates ?? 0;

    sim.restartUpdateIds({ nextId: firstId - 10_000 });
    crowd.send(150, "after");
    await eventually("the 150 new ones", () => expect(seen).toHaveLength(200), {
      timeoutMs: 15_000,
    });
    const fresh = seen.slice(50);
    expect(new Set(fresh.map((update) => update.update_id)).size).toBe(150);
    for (const order of crowd.sequences(fresh)) {
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
    expect(poller.snapshot().idRestarts).toBe(1);
    expect(await queue.highestUpdateId()).toBe(firstId - 10_000 + 149);
    expect((sim.counters().calls.getUpdates ?? 0) - pollsBefore).toBeLessThan(20);
  });
});

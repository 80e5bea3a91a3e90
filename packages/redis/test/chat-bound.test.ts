// One chat whose replies wait (a 429 froze the group, or its 20 messages a minute are spent) holds
// at most `maxPerChat` of the bot's processing, over every worker: a person in another chat is
// answered meanwhile, and the group's people all run, in order, once it moves again.

import type { Update } from "@grammyjs/types";
import { createDeferred } from "@telepace/core";
import { describeWithRedis, eventually } from "@telepace/testing";
import { afterEach, expect, it } from "vitest";
import { RedisUpdateQueue, SharedUpdateWorker } from "../src/index.js";
import { dyingQueue } from "./support/dying-queue.js";
import { groupMessage, message, sleep } from "./support/updates.js";

const GROUP = -4_001;
let bots = 1_200;
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describeWithRedis("a chat holds at most maxPerChat of the bot's processing", (server) => {
  const queueFor = (botId: number) => {
    const queue = new RedisUpdateQueue({ redis: server().url, botId });
    cleanup.push(() => queue.close());
    return queue;
  };

  it("a frozen group's 40 people take 8 of two workers' 32 slots; a private chat is answered at once", async () => {
    const bot = ++bots;
    const queue = queueFor(bot);
    const frozen = createDeferred<void>();
    const running = new Set<number>();
    let mostInGroup = 0;
    const done: Update[] = [];
    const processor = async (update: Update) => {
      const chat = update.message?.chat.id;
      if (chat === GROUP) {
        running.add(update.update_id);
        mostInGroup = Math.max(mostInGroup, running.size);
        // The reply waits for the group's freeze.
        await frozen.promise;
        running.delete(update.update_id);
      }
      done.push(update);
    };
    for (const name of ["w1", "w2"]) {
      const worker = new SharedUpdateWorker(queueFor(bot), processor, {
        workerId: name,
        idleMs: 5,
      });
      cleanup.push(() => worker.close({ timeoutMs: 0 }));
      void worker.run();
    }
    // 40 members write twice each, then someone writes privately.
    const groupUpdates = [
      ...Array.from({ length: 40 }, (_, i) => groupMessage(i + 1, GROUP, 100 + i)),
      ...Array.from({ length: 40 }, (_, i) => groupMessage(i + 41, GROUP, 100 + i)),
    ];
    await queue.append(groupUpdates);
    await sleep(200);
    await queue.append([message(81, 7)]);
    await eventually("the private chat answered", () => done.some((u) => u.update_id === 81), {
      timeoutMs: 2_000,
    });
    expect(done).toHaveLength(1);
    expect(mostInGroup).toBe(8);
    frozen.resolve();
    await eventually("everyone in the group answered", () => done.length === 81);
    expect(mostInGroup).toBe(8);
    // Each member's two messages in order, each once.
    for (let i = 0; i < 40; i++) {
      const ids = done.filter((u) => u.message?.from?.id === 100 + i).map((u) => u.update_id);
      expect(ids).toEqual([i + 1, i + 41]);
    }
    await eventually("all completed", async () => (await queue.unfinished()) === 0);
  });

  it("maxPerChat 0 lifts the bound: the group may take every slot", async () => {
    const bot = ++bots;
    const queue = queueFor(bot);
    const frozen = createDeferred<void>();
    let inGroup = 0;
    const worker = new SharedUpdateWorker(
      queueFor(bot),
      async () => {
        inGroup++;
        await frozen.promise;
      },
      { idleMs: 5, concurrency: 4, maxPerChat: 0 },
    );
    cleanup.push(() => worker.close({ timeoutMs: 0 }));
    void worker.run();
    await queue.append(Array.from({ length: 6 }, (_, i) => groupMessage(i + 1, GROUP, 100 + i)));
    await eventually("four running", () => inGroup === 4);
    frozen.resolve();
  });

  it("a worker that dies holding the group's share hands it on: the parked people run after the lease", async () => {
    const bot = ++bots;
    const queue = queueFor(bot);
    const doomed = dyingQueue(queueFor(bot));
    const dying = new SharedUpdateWorker(doomed.queue, () => new Promise<never>(() => {}), {
      workerId: "doomed",
      idleMs: 5,
      leaseMs: 300,
      maxPerChat: 2,
    });
    cleanup.push(() => dying.close({ timeoutMs: 0 }));
    void dying.run();
    await queue.append(Array.from({ length: 5 }, (_, i) => groupMessage(i + 1, GROUP, 100 + i)));
    await eventually("the doomed worker holds two", () => dying.snapshot().processing === 2);
    doomed.die();
    const seen: number[] = [];
    const survivor = new SharedUpdateWorker(
      queueFor(bot),
      (update: Update) => {
        seen.push(update.update_id);
      },
      { workerId: "survivor", idleMs: 5, leaseMs: 300, maxPerChat: 2 },
    );
    cleanup.push(() => survivor.close({ timeoutMs: 0 }));
    void survivor.run();
    await eventually("all five ran", () => seen.length === 5, { timeoutMs: 5_000 });
    expect([...seen].sort()).toEqual([1, 2, 3, 4, 5]);
    expect(survivor.snapshot().handedOver).toBe(2);
    await eventually("all completed", async () => (await queue.unfinished()) === 0);
  });

  it("checks maxPerChat", () => {
    const queue = {} as RedisUpdateQueue;
    expect(() => new SharedUpdateWorker(queue, () => {}, { maxPerChat: -1 })).toThrow(
      "Expected `maxPerChat` to be an integer >= 0, got -1",
    );
    expect(() => new SharedUpdateWorker(queue, () => {}, { maxPerChat: 1.5 })).toThrow(RangeError);
  });
});

import type { Update } from "@grammyjs/types";
import { describeWithRedis, eventually } from "@telepace/testing";
import { afterEach, expect, it } from "vitest";
import {
  RedisUpdateQueue,
  SharedPoller,
  SharedUpdateWorker,
  sharedPollerDefaults,
  sharedUpdateWorkerDefaults,
} from "../src/index.js";
import { dyingQueue } from "./support/dying-queue.js";
import { message, sleep, until, userOf } from "./support/updates.js";

let bots = 100;
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describeWithRedis("SharedUpdateWorker and SharedPoller", (server) => {
  const queueFor = (botId: number) => {
    const queue = new RedisUpdateQueue({ redis: server().url, botId });
    cleanup.push(() => queue.close());
    return queue;
  };

  /** Records starts and ends; fails the test on overlap within a principal. */
  const recorder = () => {
    const active = new Set<number>();
    const seen: Update[] = [];
    const overlaps: number[] = [];
    const processor = async (update: Update) => {
      const user = userOf(update);
      if (active.has(user)) overlaps.push(update.update_id);
      active.add(user);
      await sleep(Math.random() * 4);
      seen.push(update);
      active.delete(user);
    };
    return { processor, seen, overlaps };
  };

  it("several workers: per-person order, never two updates of a person at once, each update once", async () => {
    const bot = ++bots;
    const queue = queueFor(bot);
    const { processor, seen, overlaps } = recorder();
    const workers = [1, 2, 3].map((n) => {
      const worker = new SharedUpdateWorker(queueFor(bot), processor, {
        workerId: `w${n}`,
        concurrency: 4,
        idleMs: 2,
      });
      cleanup.push(() => worker.close());
      void worker.run();
      return worker;
    });
    const updates = Array.from({ length: 300 }, (_, i) => message(i + 1, 1 + (i % 17)));
    for (let i = 0; i < updates.length; i += 50) await queue.append(updates.slice(i, i + 50));
    await eventually("all processed", () => seen.length === 300, { timeoutMs: 15_000 });
    expect(overlaps).toEqual([]);
    for (let user = 1; user <= 17; user++) {
      const ids = seen.filter((u) => userOf(u) === user).map((u) => u.update_id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    }
    expect(new Set(seen.map((u) => u.update_id)).size).toBe(300);
    expect(workers.every((w) => w.snapshot().claimed > 0)).toBe(true);
    // A processor's end comes just before its completion reaches Redis.
    await eventually("all completed", () => {
      expect(workers.reduce((sum, w) => sum + w.snapshot().completed, 0)).toBe(300);
    });
    expect(await queue.unfinished()).toBe(0);
  });

  it("a worker that dies hands its people on after the lease: the interrupted update first, nothing lost", async () => {
    const bot = ++bots;
    const queue = queueFor(bot);
    const { processor, seen } = recorder();
    const doomed = dyingQueue(queueFor(bot));
    let interrupted: number | undefined;
    const hang = new Promise<never>(() => {});
    const dying = new SharedUpdateWorker(
      doomed.queue,
      async (update) => {
        interrupted ??= update.update_id;
        doomed.die();
        await hang;
      },
      { workerId: "doomed", leaseMs: 300, idleMs: 2 },
    );
    cleanup.push(() => dying.close({ timeoutMs: 0 }));
    void dying.run();
    await queue.append([message(1, 1), message(2, 1), message(3, 2)]);
    await eventually("the doomed worker took one", () => interrupted !== undefined);
    const survivor = new SharedUpdateWorker(queueFor(bot), processor, {
      workerId: "survivor",
      leaseMs: 300,
      idleMs: 2,
    });
    cleanup.push(() => survivor.close({ timeoutMs: 0 }));
    void survivor.run();
    const started = performance.now();
    await eventually("all three processed", () => seen.length === 3, { timeoutMs: 5_000 });
    expect(seen.map((u) => u.update_id)).toContain(interrupted);
    // Person 1's updates in order, the interrupted one (1) first.
    expect(seen.filter((u) => userOf(u) === 1).map((u) => u.update_id)).toEqual([1, 2]);
    expect(survivor.snapshot().handedOver).toBe(1);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await queue.unfinished()).toBe(0);
  });

  it("one poller polls; when it dies another takes the lease and goes on from the stored offset", async () => {
    const bot = ++bots;
    const queue = queueFor(bot);
    // A fake Bot API: updates 1..n, offset confirms, one long poll answered at a time.
    let produced = 0;
    const offsets: number[] = [];
    const getUpdates = async (
      params: { offset?: number; limit: number },
      { signal }: { signal: AbortSignal },
    ) => {
      offsets.push(params.offset ?? 0);
      await sleep(5);
      if (signal.aborted) throw signal.reason;
      const from = Math.max(params.offset ?? 1, 1);
      const batch: Update[] = [];
      for (let id = from; id <= produced && batch.length < params.limit; id++)
        batch.push(message(id, id % 5));
      return batch;
    };
    const doomed = dyingQueue(queueFor(bot));
    const first = new SharedPoller(doomed.queue, { getUpdates, pollerId: "p1", leaseMs: 300 });
    const second = new SharedPoller(queueFor(bot), { getUpdates, pollerId: "p2", leaseMs: 300 });
    cleanup.push(
      () => first.close(),
      () => second.close(),
    );
    void first.run();
    await eventually("p1 leads", () => first.snapshot().isLeader);
    void second.run();
    produced = 20;
    await until("20 stored", async () => (await queue.highestUpdateId()) === 20);
    expect(second.snapshot()).toMatchObject({ isLeader: false, polls: 0 });
    doomed.die();
    const died = performance.now();
    produced = 40;
    await eventually("p2 leads", () => second.snapshot().isLeader, { timeoutMs: 3_000 });
    expect(performance.now() - died).toBeLessThan(1_500);
    await until("40 stored", async () => (await queue.highestUpdateId()) === 40);
    expect(await queue.unfinished()).toBe(40);
  });

  it("at the defaults a dead worker's people and a dead poller's polling move on within 2.5 s", async () => {
    expect(sharedUpdateWorkerDefaults.leaseMs).toBe(1_500);
    expect(sharedPollerDefaults.leaseMs).toBe(1_500);
    const bot = ++bots;
    const queue = queueFor(bot);
    const { processor, seen } = recorder();
    const workerQueue = dyingQueue(queueFor(bot));
    const pollerQueue = dyingQueue(queueFor(bot));
    const hang = new Promise<never>(() => {});
    const dying = new SharedUpdateWorker(workerQueue.queue, () => hang, { workerId: "doomed" });
    const getUpdates = async (_: unknown, { signal }: { signal: AbortSignal }) => {
      await sleep(5);
      signal.throwIfAborted();
      return [];
    };
    const first = new SharedPoller(pollerQueue.queue, { getUpdates, pollerId: "p1" });
    cleanup.push(
      () => dying.close({ timeoutMs: 0 }),
      () => first.close(),
    );
    void dying.run();
    void first.run();
    await queue.append([message(1, 1)]);
    await eventually(
      "the doomed worker holds person 1",
      async () => (await queue.ownedBy("doomed")) === 1,
    );
    await eventually("p1 leads", () => first.snapshot().isLeader);
    const survivor = new SharedUpdateWorker(queueFor(bot), processor, { workerId: "survivor" });
    const second = new SharedPoller(queueFor(bot), { getUpdates, pollerId: "p2" });
    cleanup.push(
      () => survivor.close({ timeoutMs: 0 }),
      () => second.close(),
    );
    void survivor.run();
    void second.run();
    workerQueue.die();
    pollerQueue.die();
    const died = performance.now();
    await eventually("person 1 handed on", () => seen.length === 1, { timeoutMs: 5_000 });
    const handedOverMs = performance.now() - died;
    await eventually("p2 leads", () => second.snapshot().isLeader, { timeoutMs: 5_000 });
    const tookOverMs = performance.now() - died;
    // The lease (1.5 s) and a claim or take after it, far from the former 30 s and 10 s.
    expect(handedOverMs).toBeLessThan(2_500);
    expect(tookOverMs).toBeLessThan(2_500);
    expect(survivor.snapshot().handedOver).toBe(1);
  });

  it("a poller that closes gives the lease up at once", async () => {
    const bot = ++bots;
    const getUpdates = async () => {
      await sleep(5);
      return [];
    };
    const a = new SharedPoller(queueFor(bot), { getUpdates, pollerId: "a", leaseMs: 60_000 });
    const b = new SharedPoller(queueFor(bot), { getUpdates, pollerId: "b", leaseMs: 400 });
    cleanup.push(() => b.close());
    void a.run();
    await eventually("a leads", () => a.snapshot().isLeader);
    void b.run();
    await a.close();
    await eventually("b leads", () => b.snapshot().isLeader, { timeoutMs: 1_000 });
  });
});

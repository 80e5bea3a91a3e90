import type { Update } from "@grammyjs/types";
import { describeWithRedis, eventually, spyLogger } from "@telepace/testing";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { RedisUpdateQueue, SharedPoller, SharedUpdateWorker } from "../src/index.js";
import { message, sleep } from "./support/updates.js";

let bots = 500;
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describeWithRedis("SharedUpdateWorker behaviour", (server) => {
  const queueFor = (botId: number) => {
    const queue = new RedisUpdateQueue({ redis: server().url, botId });
    cleanup.push(() => queue.close());
    return queue;
  };

  it("a processor that throws still completes its update, logged by update_id only", async () => {
    const queue = queueFor(++bots);
    const logger = spyLogger();
    const seen: number[] = [];
    const worker = new SharedUpdateWorker(
      queue,
      (update) => {
        seen.push(update.update_id);
        if (update.update_id === 1) throw new Error("secret detail");
      },
      { idleMs: 2, logger },
    );
    cleanup.push(() => worker.close());
    void worker.run();
    await queue.append([message(1, 7, "private text"), message(2, 7)]);
    await eventually("both ran", () => seen.length === 2);
    await eventually("both completed", () => worker.snapshot().completed === 2);
    expect(worker.snapshot()).toMatchObject({ failed: 1, completed: 2 });
    expect(logger.calls).toEqual([
      {
        level: "error",
        fields: { updateId: 1 },
        message: "An update's processing failed; it is completed and not run again",
      },
    ]);
    expect(logger.text()).not.toMatch(/secret detail|private text/);
  });

  it("aborts the processor's signal when its lease is lost, and does not complete it", async () => {
    const queue = queueFor(++bots);
    let signal: AbortSignal | undefined;
    const worker = new SharedUpdateWorker(
      queue,
      async (_update: Update, given) => {
        signal = given;
        await new Promise((resolve) => given.addEventListener("abort", resolve));
      },
      { idleMs: 2, leaseMs: 3_000, heartbeatMs: 100 },
    );
    cleanup.push(() => worker.close({ timeoutMs: 0 }));
    void worker.run();
    await queue.append([message(1, 7)]);
    await eventually("claimed", () => signal !== undefined);
    // Another worker took the principal over (as after a pause longer than the lease).
    const redis = new Redis(server().url);
    cleanup.push(() => redis.quit());
    const owners = `${queue.namespace}:owners`;
    const [principal] = await redis.hkeys(owners);
    await redis.hset(owners, principal as string, "thief:1");
    await eventually("aborted", () => signal?.aborted === true, { timeoutMs: 2_000 });
    expect(worker.snapshot()).toMatchObject({ leasesLost: 1, completed: 0 });
    expect(await queue.unfinished()).toBe(1);
  });

  it("timeoutMs: a hung processor's signal aborts with ERR_UPDATE_TIMEOUT, its update completes and the principal goes on", async () => {
    const queue = queueFor(++bots);
    const logger = spyLogger();
    const reasons: unknown[] = [];
    const started: [number, number][] = [];
    let lateResult: (() => void) | undefined;
    const worker = new SharedUpdateWorker(
      queue,
      (update: Update, signal) => {
        started.push([update.update_id, performance.now()]);
        if (update.update_id !== 1) return;
        // Hangs past its timeout (the heartbeat would keep its lease for good), then fails late.
        signal.addEventListener("abort", () => reasons.push(signal.reason));
        return new Promise((_, reject) => {
          lateResult = () => reject(new Error("late"));
        });
      },
      { idleMs: 2, leaseMs: 3_000, heartbeatMs: 50, timeoutMs: 200, logger },
    );
    cleanup.push(() => worker.close({ timeoutMs: 0 }));
    void worker.run();
    await queue.append([message(1, 7), message(2, 7)]);
    await eventually("the principal's next update ran", () => started.length === 2, {
      timeoutMs: 3_000,
    });
    const [[, first], [, second]] = started as [[number, number], [number, number]];
    // Well before the 3 s lease: the timeout, not a lost lease, let the principal go on.
    expect(second - first).toBeGreaterThanOrEqual(190);
    expect(second - first).toBeLessThan(1_500);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatchObject({ name: "UpdateDispatchError", code: "ERR_UPDATE_TIMEOUT" });
    await eventually("both completed", () => worker.snapshot().completed === 2);
    lateResult?.();
    await sleep(20);
    expect(worker.snapshot()).toMatchObject({ timedOut: 1, failed: 0, leasesLost: 0 });
    expect(await queue.unfinished()).toBe(0);
    expect(logger.calls).toEqual([
      {
        level: "warn",
        fields: { updateId: 1 },
        message: "An update's processing timed out; its signal was aborted and it is completed",
      },
    ]);
  });

  it("close() waits for updates in processing, then stops claiming", async () => {
    const queue = queueFor(++bots);
    const done: number[] = [];
    const worker = new SharedUpdateWorker(
      queue,
      async (update) => {
        await sleep(100);
        done.push(update.update_id);
      },
      { idleMs: 2 },
    );
    void worker.run();
    await queue.append([message(1, 1), message(2, 2)]);
    await eventually("both in processing", () => worker.snapshot().processing === 2);
    await worker.close({ timeoutMs: 5_000 });
    expect(done.sort()).toEqual([1, 2]);
    expect(worker.snapshot()).toMatchObject({ state: "closed", completed: 2 });
    await queue.append([message(3, 3)]);
    await sleep(50);
    expect(await queue.unfinished()).toBe(1);
  });
});

describe("options are checked whole", () => {
  const queue = {} as RedisUpdateQueue;
  it("SharedUpdateWorker", () => {
    const make = (options: unknown) => () =>
      new SharedUpdateWorker(queue, () => {}, options as never);
    expect(make({ concurency: 2 })).toThrow("did you mean `concurrency`?");
    expect(make({ concurrency: 0 })).toThrow("Expected `concurrency` to be an integer >= 1, got 0");
    expect(make({ leaseMs: 50 })).toThrow(RangeError);
    expect(make({ leaseMs: 1_000, heartbeatMs: 1_000 })).toThrow(/heartbeatMs/);
    expect(make({ workerId: "" })).toThrow(/workerId/);
    expect(make({ timeoutMs: 0 })).toThrow("Expected `timeoutMs` to be");
    expect(make({ timeoutMs: Number.POSITIVE_INFINITY })).toThrow(RangeError);
    expect(make({ timeoutMs: "1s" })).toThrow(TypeError);
    expect(() => new SharedUpdateWorker(queue, "nope" as never)).toThrow(/processor/);
  });

  it("SharedPoller", () => {
    const getUpdates = async () => [];
    const make = (options: unknown) => () => new SharedPoller(queue, options as never);
    expect(make({})).toThrow(/getUpdates/);
    expect(make({ getUpdates, pollLimit: 101 })).toThrow(RangeError);
    expect(make({ getUpdates, pollTimeoutSeconds: 51 })).toThrow(RangeError);
    expect(make({ getUpdates, leaseMs: 10, x: 1 })).toThrow(/Unknown option `x`/);
  });
});

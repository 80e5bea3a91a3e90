import { createDeferred } from "@telepace/core";
import { RedisUpdateQueue, SharedUpdateWorker } from "@telepace/redis";
import { describeWithRedis, eventually } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import { instrumentTelepace, type SharedWorkerSource } from "../src/index.js";
import { meterHarness } from "./support/metric-reader.js";
import { message, SECRET_TEXT } from "./support/updates.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describeWithRedis("shared worker metrics", (server) => {
  it("report updates in processing and the worker's counters, read from a real worker", async () => {
    const queue = new RedisUpdateQueue({ redis: server().url, botId: 7_001 });
    cleanup.push(() => queue.close());
    const held = createDeferred<void>();
    const worker = new SharedUpdateWorker(
      queue,
      async (update) => {
        if (update.update_id === 2) throw new Error(SECRET_TEXT);
        if (update.update_id === 3) await held.promise;
      },
      { idleMs: 2 },
    );
    cleanup.push(() => worker.close({ timeoutMs: 0 }));
    let reads = 0;
    const source: SharedWorkerSource = {
      snapshot: () => {
        reads++;
        return worker.snapshot();
      },
    };
    // The real worker fits the source type as it is.
    const fits: SharedWorkerSource = worker;
    expect(Object.isFrozen(fits.snapshot())).toBe(true);
    const { meter, collect } = meterHarness();
    const metrics = instrumentTelepace({ meter, sharedWorker: source });
    void worker.run();
    // Three people, so all three run at once; the third waits until released.
    await queue.append([message(1, 11), message(2, 12), message(3, 13)]);
    await eventually("two completed", () => worker.snapshot().completed === 2);
    await eventually("the third processing", () => worker.snapshot().processing === 1);

    const during = await collect();
    expect(during.value("telepace.shared_worker.processing")).toBe(1);
    expect(during.value("telepace.shared_worker.updates.claimed")).toBe(3);
    expect(during.value("telepace.shared_worker.updates.completed")).toBe(2);
    expect(during.value("telepace.shared_worker.updates.failed")).toBe(1);
    for (const name of [
      "telepace.shared_worker.updates.timed_out",
      "telepace.shared_worker.updates.handed_over",
      "telepace.shared_worker.leases.lost",
      "telepace.shared_worker.queue.failures",
    ]) {
      expect(during.value(name), name).toBe(0);
    }
    expect(JSON.stringify(during.resource)).not.toContain(SECRET_TEXT);

    held.resolve();
    await eventually("all completed", () => worker.snapshot().completed === 3);
    const after = await collect();
    expect(after.value("telepace.shared_worker.processing")).toBe(0);
    expect(after.value("telepace.shared_worker.updates.completed")).toBe(3);

    // Once stopped, the worker's snapshot is no longer read.
    metrics.stop();
    const readsBefore = reads;
    await collect();
    expect(reads).toBe(readsBefore);
  });
});

describe("the sharedWorker option", () => {
  it("needs a snapshot()", () => {
    const { meter } = meterHarness();
    expect(() => instrumentTelepace({ meter, sharedWorker: {} as SharedWorkerSource })).toThrow(
      "Expected `sharedWorker` to be an object with `snapshot`, got an object without `snapshot`",
    );
  });
});

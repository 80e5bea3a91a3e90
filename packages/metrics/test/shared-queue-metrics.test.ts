import { RedisUpdateQueue } from "@telepace/redis";
import { describeWithRedis, startRedis } from "@telepace/testing";
import { afterEach, expect, it } from "vitest";
import { instrumentTelepace, type SharedQueueSource } from "../src/index.js";
import { meterHarness } from "./support/metric-reader.js";
import { message } from "./support/updates.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describeWithRedis("shared queue metrics", (server) => {
  it("report the queue's backlog, read from Redis at each collection", async () => {
    const queue = new RedisUpdateQueue({ redis: server().url, botId: 7_002 });
    cleanup.push(() => queue.close());
    const source: SharedQueueSource = queue;
    const { meter, collect } = meterHarness();
    const metrics = instrumentTelepace({ meter, sharedQueue: source });
    expect((await collect()).value("telepace.shared_queue.unfinished")).toBe(0);
    await queue.append([message(1, 11), message(2, 12), message(3, 11)]);
    expect((await collect()).value("telepace.shared_queue.unfinished")).toBe(3);
    const claim = await queue.claim("worker-1", 10_000);
    expect(claim?.update.update_id).toBe(1);
    await queue.complete(claim as NonNullable<typeof claim>);
    expect((await collect()).value("telepace.shared_queue.unfinished")).toBe(2);
    metrics.stop();
  });

  it("leave a gap while Redis cannot answer, and the collection goes on", async () => {
    const spare = await startRedis();
    await spare.stop();
    const queue = new RedisUpdateQueue({ redis: `redis://127.0.0.1:${spare.port}`, botId: 7_003 });
    cleanup.push(() => queue.close());
    const { meter, collect } = meterHarness();
    using _metrics = instrumentTelepace({ meter, sharedQueue: queue });
    expect((await collect()).value("telepace.shared_queue.unfinished")).toBeUndefined();
  });
});

import { describeWithRedis } from "@telepace/testing";
import { afterEach, expect, it } from "vitest";
import { RedisUpdateQueue } from "../src/index.js";
import { message, sleep } from "./support/updates.js";

let bots = 0;
const queues: RedisUpdateQueue[] = [];
afterEach(async () => {
  for (const queue of queues.splice(0)) await queue.close();
});

describeWithRedis("RedisUpdateQueue", (server) => {
  const fresh = (
    options: { maxUnfinished?: number; dedupeLimit?: number; botId?: number } = {},
  ) => {
    const queue = new RedisUpdateQueue({ redis: server().url, botId: ++bots, ...options });
    queues.push(queue);
    return queue;
  };

  it("keeps each principal in FIFO order and leases one update of a principal at a time", async () => {
    const queue = fresh();
    await queue.append([message(1, 10), message(2, 10), message(3, 20), message(4, 10)]);
    const a = await queue.claim("w1", 10_000);
    const b = await queue.claim("w2", 10_000);
    expect([a?.update.update_id, b?.update.update_id]).toEqual([1, 3]);
    // Both principals are leased: nothing else is ready.
    expect(await queue.claim("w3", 10_000)).toBeUndefined();
    expect(await queue.complete(a as never)).toBe(true);
    expect((await queue.claim("w3", 10_000))?.update.update_id).toBe(2);
    expect(await queue.unfinished()).toBe(3);
  });

  it("is idempotent by update_id and says what to confirm", async () => {
    const queue = fresh();
    const first = await queue.append([message(5, 1), message(6, 1)]);
    expect(first).toMatchObject({ duplicates: 0, deferred: 0, highestUpdateId: 6 });
    expect(first.appended.map((u) => u.update_id)).toEqual([5, 6]);
    const again = await queue.append([message(6, 1), message(7, 2)]);
    expect(again).toMatchObject({ duplicates: 1, highestUpdateId: 7 });
    expect(again.appended.map((u) => u.update_id)).toEqual([7]);
    expect(await queue.highestUpdateId()).toBe(7);
    // A completed update is still a duplicate.
    const claim = await queue.claim("w", 1_000);
    await queue.complete(claim as never);
    expect((await queue.append([message(5, 1)])).duplicates).toBe(1);
  });

  it("stores up to maxUnfinished and defers the rest: the confirm point stops before them", async () => {
    const queue = fresh({ maxUnfinished: 2 });
    const result = await queue.append([message(1, 1), message(2, 2), message(3, 3)]);
    expect(result).toMatchObject({ deferred: 1, highestUpdateId: 2 });
    expect(await queue.hasRoom()).toBe(false);
    await queue.complete((await queue.claim("w", 1_000)) as never);
    expect(await queue.hasRoom()).toBe(true);
    expect((await queue.append([message(3, 3)])).appended).toHaveLength(1);
  });

  it("hands an expired lease on, the interrupted update first; the old holder can no longer complete", async () => {
    const queue = fresh();
    await queue.append([message(1, 10), message(2, 10)]);
    const dead = await queue.claim("dead", 150);
    expect(dead?.deliveries).toBe(1);
    expect(await queue.claim("alive", 10_000)).toBeUndefined();
    await sleep(200);
    // Expired, but still the dead worker's until a claim hands it on.
    expect(await queue.ownedBy("dead")).toBe(1);
    expect(await queue.ownedBy("dea")).toBe(0);
    const taken = await queue.claim("alive", 10_000);
    expect(taken).toMatchObject({ principal: dead?.principal, deliveries: 2 });
    expect(await queue.ownedBy("dead")).toBe(0);
    expect(await queue.ownedBy("alive")).toBe(1);
    expect(taken?.update.update_id).toBe(1);
    expect(await queue.complete(dead as never)).toBe(false);
    expect(await queue.complete(taken as never)).toBe(true);
    expect((await queue.claim("alive", 10_000))?.update.update_id).toBe(2);
  });

  it("heartbeats keep a lease; a lease taken over reports lost", async () => {
    const queue = fresh();
    await queue.append([message(1, 10), message(2, 20)]);
    const held = await queue.claim("w1", 200);
    const other = await queue.claim("w1", 150);
    for (let i = 0; i < 3; i++) {
      await sleep(100);
      expect(await queue.heartbeat([held as never], 200)).toEqual([true]);
    }
    expect(await queue.claim("w2", 1_000)).toMatchObject({ principal: other?.principal });
    expect(await queue.heartbeat([held as never, other as never], 200)).toEqual([true, false]);
  });

  it("serves the principal with the oldest waiting update first", async () => {
    const queue = fresh();
    await queue.append([message(1, 1), message(2, 2), message(3, 1), message(4, 3)]);
    const one = await queue.claim("w", 10_000);
    await queue.complete(one as never);
    const order: number[] = [];
    for (
      let claim = await queue.claim("w", 10_000);
      claim;
      claim = await queue.claim("w", 10_000)
    ) {
      order.push(claim.update.update_id);
      await queue.complete(claim);
    }
    expect(order).toEqual([2, 3, 4]);
  });

  it("keys live under <prefix>:{<botId>}:q and bots do not share updates", async () => {
    const a = fresh({ botId: 77_001 });
    const b = fresh({ botId: 77_002 });
    await a.append([message(1, 1)]);
    expect(await b.claim("w", 1_000)).toBeUndefined();
    expect(a.namespace).toBe("telepace:{77001}:q");
  });

  it("checks its options whole", () => {
    const make = (options: unknown) => () => new RedisUpdateQueue(options as never);
    expect(make({ redis: server().url, botId: 1, maxUnfinshed: 3 })).toThrow(
      "did you mean `maxUnfinished`?",
    );
    expect(make({ redis: server().url, botId: 1, maxUnfinished: 0 })).toThrow(RangeError);
    expect(make({ redis: server().url, botId: 1, maxUnfinished: 10, dedupeLimit: 5 })).toThrow(
      "Expected `dedupeLimit` to be an integer >= 10, got 5",
    );
    const queue = fresh();
    expect(() => queue.claim("w", 1_000, { claimId: "a:b" })).toThrow(
      'Expected `claimId` to be 1 to 64 letters, digits, "_" or "-", got "a:b"',
    );
    expect(() => queue.claim("w", 1_000, { maxPerChat: -1 })).toThrow(RangeError);
    expect(() => queue.claim("w", 1_000, { claimID: "x" } as never)).toThrow(
      "did you mean `claimId`?",
    );
  });
});

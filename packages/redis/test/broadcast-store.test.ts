// RedisBroadcastStore against a real redis-server: the store contract every BroadcastStore keeps,
// leases on Redis time (a batch whose holder stopped renewing goes to the next claim), and two
// registries in one process sharing a broadcast against the sim without repeating anyone, and
// following each other's pause, resume and cancel.

import { start } from "@telepace/bot-api-sim";
import { type BatchClaim, type Broadcast, BroadcastRegistry } from "@telepace/broadcast";
import { describeBroadcastStoreContract } from "@telepace/broadcast/testing";
import { TelegramClient } from "@telepace/client";
import { describeWithRedis, eventually } from "@telepace/testing";
import { afterAll, afterEach, expect, it } from "vitest";
import { RedisBroadcastStore } from "../src/index.js";

let bots = 700;
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});
const lasting: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of lasting.splice(0).reverse()) await close();
});

/** A sim with `count` users who started the bot, closed after the test. */
async function simWithUsers(count: number, options: { paidBroadcasts?: boolean } = {}) {
  const sim = await start(options);
  cleanup.push(() => sim.close());
  const ids = Array.from({ length: count }, () => {
    const user = sim.users.create();
    sim.chats.createPrivate(user);
    return user.id;
  });
  return { sim, ids };
}

describeWithRedis("RedisBroadcastStore", (server) => {
  const storeFor = (botId: number, list = cleanup) => {
    const store = new RedisBroadcastStore({ redis: server().url, botId });
    list.push(() => store.close());
    return store;
  };

  describeBroadcastStoreContract("the BroadcastStore contract", () => {
    const botId = ++bots;
    return { store: storeFor(botId, lasting), another: () => storeFor(botId, lasting) };
  });

  it("gives a batch whose lease ran out to the next claim; its old holder can no longer write", async () => {
    const botId = ++bots;
    const [a, b] = [storeFor(botId), storeFor(botId)];
    await a.open("lease", { fingerprint: "f", batchSize: 2, end: 4 });
    const held = await a.claim("lease", "a", 150);
    if (held.status !== "claimed") throw new Error("not claimed");
    await a.markStarted(held.claim, 0);
    // Another process gets the next batch while the first is leased…
    expect(await b.claim("lease", "b", 150)).toMatchObject({ claim: { batch: 1 } });
    // …and, with nothing left to claim, waits for the lease to run out.
    const waiting = await b.claim("lease", "b", 60_000);
    expect(waiting).toMatchObject({ status: "wait" });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const taken = await b.claim("lease", "b", 60_000);
    expect(taken).toMatchObject({ status: "claimed", claim: { batch: 0 } });
    if (taken.status !== "claimed") return;
    expect([...taken.claim.recorded]).toEqual([[0, "s"]]);
    await expect(a.markSettled(held.claim, 0, "sent")).rejects.toMatchObject({
      code: "ERR_BROADCAST_LEASE_LOST",
    });
    expect(await a.renew(held.claim, 60_000)).toBe(false);
  });

  it("refuses options it does not know, and a record it cannot read", async () => {
    expect(
      () => new RedisBroadcastStore({ redis: server().url, botId: 1, prefx: "x" } as never),
    ).toThrow(/Unknown option `prefx` in `options` \(did you mean `prefix`\?\)/);
    const store = storeFor(++bots);
    await expect(
      store.markStarted({ id: "none", batch: 0, from: 0, to: 1, token: "t" } as BatchClaim, 0),
    ).rejects.toMatchObject({ code: "ERR_BROADCAST_LEASE_LOST" });
  });

  it("two registries share one broadcast against the sim: everyone once, counts for the whole", async () => {
    const { sim, ids } = await simWithUsers(300, { paidBroadcasts: true });
    const botId = ++bots;
    const jobs = [0, 1].map((n) => {
      const client = new TelegramClient({ token: sim.token, apiRoot: sim.apiRoot });
      cleanup.push(() => client.close());
      const registry = new BroadcastRegistry({ client, store: storeFor(botId), workerId: `w${n}` });
      cleanup.push(() => registry.close());
      return registry.start("shared", {
        message: { method: "sendMessage", params: { text: "together" } },
        recipients: ids,
        paid: true,
        batchSize: 20,
      });
    });
    const reports = await Promise.all(jobs.map((job) => job.result));
    for (const report of reports) {
      expect(report).toMatchObject({ status: "completed", counts: { sent: 300 } });
    }
    expect(ids.map((id) => sim.transcript(id).messages.length)).toEqual(ids.map(() => 1));
  }, 30_000);

  it("a pause, resume or cancel in one registry is followed by the other at its lease renewal", async () => {
    const { sim, ids } = await simWithUsers(200);
    const botId = ++bots;
    // One client (one outbox, one 30/s), two registries: two processes as far as the store knows.
    const client = new TelegramClient({ token: sim.token, apiRoot: sim.apiRoot });
    cleanup.push(() => client.close());
    const [a, b] = [0, 1].map((n) => {
      const registry = new BroadcastRegistry({ client, store: storeFor(botId), workerId: `w${n}` });
      cleanup.push(() => registry.close());
      return registry.start("followed", {
        message: { method: "sendMessage", params: { text: "in step" } },
        recipients: ids,
        batchSize: 10,
        leaseMs: 300, // renewed, and the store's state read, every 100 ms
      });
    }) as [Broadcast, Broadcast];
    const sent = () => sim.counters().messagesSent;
    await eventually("both registries sent", () => a.snapshot().settled > 0 && sent() >= 20);

    await a.pause();
    await eventually("the other registry paused and drained", () => {
      const { state, queued, inFlight } = b.snapshot();
      return state === "paused" && queued === 0 && inFlight === 0;
    });
    const atPause = sent();
    expect(atPause).toBeLessThan(ids.length);

    await b.resume();
    await eventually("the first registry runs again", () => a.state === "running");
    await eventually("sends go on", () => sent() > atPause);

    const cancelled = await a.cancel();
    const other = await b.result;
    expect([cancelled.status, other.status]).toEqual(["cancelled", "cancelled"]);
    const counts = ids.map((id) => sim.transcript(id).messages.length);
    expect(counts.filter((count) => count > 1)).toEqual([]);
    expect(counts.filter((count) => count === 1).length).toBeLessThan(ids.length);
    expect((await storeFor(botId).read("followed"))?.state).toBe("cancelled");
  }, 30_000);
});

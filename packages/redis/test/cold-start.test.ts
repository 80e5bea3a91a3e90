// The first second of a bot whose processes start together: before a process has seen one of its
// requests end, it does not know how late they reach Telegram, so it asks with the whole margin.
// Another process's second-second slots then keep clear of this one's slow first requests, as
// they do once every process has request times.

import { ManualClock } from "@telepace/core";
import { TelegramOutbox } from "@telepace/outbox";
import { describeWithRedis } from "@telepace/testing";
import { afterEach, expect, it } from "vitest";
import { RedisPacingStore } from "../src/index.js";
import { TrackedStore } from "./support/tracked-store.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describeWithRedis("two processes starting together", (server) => {
  it("no second process's start falls within Telegram's second of the first process's slow first requests", async () => {
    const clock = new ManualClock();
    const stores = [0, 1].map(() => {
      const store = new RedisPacingStore({ redis: server().url, botId: 9_500, time: "caller" });
      closers.push(() => store.close());
      return new TrackedStore(store);
    });
    const starts: { readonly at: number; readonly arrivesBy: number }[] = [];
    // Process 1 has 15 requests, each taking 45 ms (its connections are new, its code is cold),
    // and then nothing more to ask; process 0 has 40 that answer at once.
    const latencies = [0, 45];
    const counts = [40, 15];
    const outboxes = stores.map((pacingStore, index) => {
      const outbox = new TelegramOutbox({
        clock,
        pacingStore,
        globalRps: 30,
        privateChatRps: 0,
        groupChatRps: 0,
      });
      closers.push(() => outbox.close({ drain: false }));
      return { outbox, latencyMs: latencies[index] as number, count: counts[index] as number };
    });
    for (let chat = 1; chat <= 40; chat++) {
      for (const { outbox, latencyMs, count } of outboxes) {
        if (chat > count) continue;
        outbox.enqueue({
          chatId: chat,
          execute: async () => {
            starts.push({ at: clock.now(), arrivesBy: clock.now() + latencyMs });
            await clock.sleep(latencyMs);
          },
        });
      }
    }
    // Time moves on only once both stores have answered everything asked so far.
    for (let fired = 0; fired < 10_000; fired++) {
      do {
        for (const store of stores) await store.settle(clock);
      } while (!stores.every((store) => store.isIdle));
      const next = clock.nextTimerAt();
      if (next === undefined) break;
      await clock.advanceTo(next);
    }
    expect(starts).toHaveLength(55);
    const sorted = [...starts].sort((a, b) => a.at - b.at);
    // A strictly sliding window at Telegram: the 31st start after any start must arrive a second
    // after that one could have.
    for (let i = 0; i + 30 < sorted.length; i++) {
      const first = sorted[i] as (typeof sorted)[number];
      const thirtyFirst = sorted[i + 30] as (typeof sorted)[number];
      expect(thirtyFirst.at - first.arrivesBy).toBeGreaterThanOrEqual(1_000);
    }
  });
});

// A 429 on a group send says how long that group must wait: the freeze holds the group in every
// process of the bot, and nothing else. (Telegram's retry_after belongs to the request that got
// it; a group's 20 a minute is the group's alone.)

import { start } from "@telepace/bot-api-sim";
import { TelegramClient } from "@telepace/client";
import { describeWithRedis } from "@telepace/testing";
import { afterEach, expect, it } from "vitest";
import { botIdOf, RedisPacingStore } from "../src/index.js";
import { sleep } from "./support/updates.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describeWithRedis("a 429 on one group", (server) => {
  it("holds that group on every process, and no other chat", async () => {
    const sim = await start();
    cleanup.push(() => sim.close());
    const alice = sim.users.create({ firstName: "Alice" });
    const bob = sim.users.create({ firstName: "Bob" });
    const aliceChat = sim.chats.createPrivate(alice);
    const group = sim.chats.createGroup({ members: [alice, bob] });
    const processes = [0, 1].map(() => {
      const pacingStore = new RedisPacingStore({
        redis: server().url,
        botId: botIdOf(sim.token),
        prefix: `freeze-${process.pid}`,
      });
      const client = new TelegramClient({
        token: sim.token,
        apiRoot: sim.apiRoot,
        outbox: { pacingStore },
      });
      cleanup.push(
        () => pacingStore.close(),
        () => client.close(),
      );
      return client;
    });
    const [first, second] = processes as [TelegramClient, TelegramClient];
    sim.faults.failNext("sendMessage", 1, { code: 429, retryAfter: 2 });
    const frozenAt = performance.now();
    const toGroup = first.sendMessage(group.id, "to the group");
    // The 429 is in: the group is frozen for 2 s.
    await sleep(300);
    const privateAt = performance.now();
    await second.sendMessage(aliceChat.id, "to Alice");
    await first.sendMessage(aliceChat.id, "to Alice again");
    const privateMs = performance.now() - privateAt;
    const fromSecond = second.sendMessage(group.id, "to the group from the other process");
    expect(await toGroup).toMatchObject({ status: "delivered" });
    expect(await fromSecond).toMatchObject({ status: "delivered" });
    const groupSends = sim
      .transcript(group)
      .events.filter((event) => event.actor === "bot" && event.kind === "send")
      .map((event) => event.atMs);
    // Alice's chat waited only for its own pacing (1 s between the two sends), not the freeze.
    expect(privateMs).toBeLessThan(1_600);
    // Both processes' group sends waited the freeze out.
    expect(groupSends).toHaveLength(2);
    for (const at of groupSends) expect(at - frozenAt).toBeGreaterThanOrEqual(1_900);
  }, 20_000);
});

// Paid broadcasts: a per-bot switch (option, CLI flag, control call); on, sends with
// allow_paid_broadcast take a limit of their own (1000/s) and the ones beyond the free amount of
// their second cost 0.1 Stars each; off, the flag is ignored and they are held to the free limits.

import { ManualClock } from "@telepace/core";
import { recordChannels } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import { parseCliArgs } from "../src/cli/cli-args.js";
import {
  type BotApiSim,
  botApiSimChannels,
  defaultRateLimits,
  type RateLimitedMessage,
  start,
} from "../src/index.js";
import { call, control, expectTooManyRequests } from "./helpers.js";

let sim: BotApiSim;
let clock: ManualClock;

/** Small limits so a test sends tens of requests, not thousands: 5/s free, 20/s paid. */
const limits = {
  globalPerSecond: 5,
  globalBurst: 5,
  paidBroadcastPerSecond: 20,
  paidBroadcastBurst: 20,
};

async function setup(options: Parameters<typeof start>[0] = {}) {
  clock = new ManualClock();
  sim = await start({ clock, rateLimits: limits, ...options });
}

afterEach(() => sim?.close());

function chats(count: number): number[] {
  return Array.from({ length: count }, () => sim.chats.createPrivate(sim.users.create()).id);
}

const send = (chatId: number, paid: boolean) =>
  call(sim, "sendMessage", {
    chat_id: chatId,
    text: "news",
    ...(paid ? { allow_paid_broadcast: true } : {}),
  });

async function statuses(targets: readonly number[], paid: boolean): Promise<number[]> {
  const replies = await Promise.all(targets.map((chat) => send(chat, paid)));
  return replies.map((reply) => reply.status);
}

const count = (list: readonly number[], status: number) => list.filter((s) => s === status).length;

describe("paid broadcasts", () => {
  it("are off by default: allow_paid_broadcast is held to the bot's free limit", async () => {
    await setup();
    expect(sim.paidBroadcasts()).toBe(false);
    const answered = await statuses(chats(8), true);
    expect([count(answered, 200), count(answered, 429)]).toEqual([5, 3]);
    expect(sim.counters()).toMatchObject({
      paidBroadcasts: 0,
      paidBroadcastsBilled: 0,
      paidBroadcastStars: 0,
    });
  });

  it("on, go up to their own limit apart from the free one, and bill what is beyond 30/s", async () => {
    await setup({ paidBroadcasts: true });
    const targets = chats(30);
    const paid = await statuses(targets.slice(0, 24), true);
    expect([count(paid, 200), count(paid, 429)]).toEqual([20, 4]);
    // The bot's free limit is untouched by them.
    const free = await statuses(targets.slice(24), false);
    expect([count(free, 200), count(free, 429)]).toEqual([5, 1]);
    // The first 5 messages of the second were free (5/s here); 15 paid ones came beyond them.
    expect(sim.counters()).toMatchObject({
      paidBroadcasts: 20,
      paidBroadcastsBilled: 15,
      paidBroadcastStars: 1.5,
      messagesSent: 25,
    });
    const refused = (await send(targets[0] as number, true)).body;
    expect(refused).toMatchObject({ ok: false, error_code: 429 });
  });

  it("name their own limit when they hit it, and the free messages of a second are counted anew", async () => {
    await setup({ paidBroadcasts: true });
    using recorder = recordChannels<RateLimitedMessage>({
      limited: botApiSimChannels["rate-limited"],
    });
    const targets = chats(21);
    await statuses(targets.slice(0, 20), true);
    expectTooManyRequests(await send(targets[20] as number, true), 1);
    expect(recorder.events.map((event) => event.scope)).toEqual(["paid-broadcast"]);
    await clock.advance(1_000);
    // A new second: its first 5 messages are free again.
    const next = await statuses(chats(6), true);
    expect(count(next, 200)).toBe(6);
    expect(sim.counters()).toMatchObject({ paidBroadcasts: 26, paidBroadcastsBilled: 16 });
  });

  it("still respect each chat's own limit", async () => {
    await setup({ paidBroadcasts: true });
    const [chat] = chats(1) as [number];
    for (let i = 0; i < defaultRateLimits.perChatBurst; i++) {
      expect((await send(chat, true)).status).toBe(200);
    }
    expectTooManyRequests(await send(chat, true), 1);
  });

  it("cost nothing within the free amount at Telegram's default limits", async () => {
    clock = new ManualClock();
    sim = await start({ clock, paidBroadcasts: true });
    const answered = await statuses(chats(40), true);
    expect(count(answered, 200)).toBe(40);
    // 30 free per second, the other 10 at 0.1 Stars.
    expect(sim.counters()).toMatchObject({ paidBroadcastsBilled: 10, paidBroadcastStars: 1 });
  });

  it("are switched per bot: bots[i].paidBroadcasts wins over the top-level default", async () => {
    await setup({
      paidBroadcasts: true,
      bots: [
        { token: `111:${"a".repeat(35)}` },
        { token: `222:${"b".repeat(35)}`, paidBroadcasts: false },
      ],
    });
    expect(sim.paidBroadcasts()).toBe(true);
    expect(sim.paidBroadcasts({ bot: 222 })).toBe(false);
    expect(sim.snapshot().bots.map((bot) => bot.paidBroadcasts)).toEqual([true, false]);
    sim.setPaidBroadcasts(true, { bot: 222 });
    sim.setPaidBroadcasts(false);
    expect(sim.snapshot().bots.map((bot) => bot.paidBroadcasts)).toEqual([false, true]);
    expect(() => sim.setPaidBroadcasts("yes" as never)).toThrow(
      new TypeError('Expected `enabled` to be a boolean, got "yes"'),
    );
    expect(() => sim.setPaidBroadcasts(true, { bots: 1 } as never)).toThrow(
      /Unknown option `bots` in `options` \(did you mean `bot`\?\)/,
    );
  });

  it("are switched over the HTTP control API", async () => {
    await setup();
    const on = await control(sim, "/bots/paid-broadcasts", { enabled: true });
    expect(on.body).toEqual({ ok: true, result: true });
    expect(sim.paidBroadcasts()).toBe(true);
    const read = await control(sim, `/bots/paid-broadcasts?bot_id=${sim.bot.id}`);
    expect(read.body).toEqual({ ok: true, result: true });
    const missing = await control(sim, "/bots/paid-broadcasts", {});
    expect(missing.status).toBe(400);
    const limitsSet = await control(sim, "/rate-limits", {
      paid_broadcast_per_second: 500,
      paid_broadcast_burst: 100,
    });
    expect(limitsSet.body.result).toMatchObject({
      paidBroadcastPerSecond: 500,
      paidBroadcastBurst: 100,
    });
  });

  it("are checked as options, and turned on by the CLI flag", async () => {
    await expect(start({ paidBroadcasts: 1 as never })).rejects.toThrow(
      new TypeError("Expected `paidBroadcasts` to be a boolean, got 1"),
    );
    await expect(start({ bots: [{ paidBroadcast: true } as never] })).rejects.toThrow(
      /Unknown option `paidBroadcast` in `bots\[0\]` \(did you mean `paidBroadcasts`\?\)/,
    );
    await expect(start({ rateLimits: { paidBroadcastBurst: 0 } })).rejects.toThrow(
      new RangeError("Expected `rateLimits.paidBroadcastBurst` to be an integer >= 1, got 0"),
    );
    expect(parseCliArgs(["--paid-broadcasts"])).toMatchObject({
      kind: "run",
      options: { paidBroadcasts: true },
    });
  });
});

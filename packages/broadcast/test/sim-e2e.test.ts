// Broadcasts end to end over real HTTP against @telepace/bot-api-sim, through TelegramClient: the
// sim's 403s (blocked, never started) and 400 (chat not found), a group upgraded to a supergroup,
// Telegram's limits (no 429 at the free pace), paid broadcasts on and off, a message Telegram
// refuses, and the token in nothing the broadcast logs, publishes or reports.

import { inspect } from "node:util";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { TelegramClient } from "@telepace/client";
import { recordChannels, spyLogger } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import {
  type BroadcastEvent,
  BroadcastRegistry,
  broadcastChannels,
  MemoryBroadcastStore,
} from "../src/index.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function world(options: { paidBroadcasts?: boolean; users: number }) {
  const sim = await start({ paidBroadcasts: options.paidBroadcasts ?? false });
  closers.push(() => sim.close());
  const users = Array.from({ length: options.users }, () => sim.users.create());
  for (const user of users) sim.chats.createPrivate(user);
  const client = new TelegramClient({ token: sim.token, apiRoot: sim.apiRoot });
  closers.push(() => client.close());
  const logger = spyLogger();
  const registry = new BroadcastRegistry({ client, store: new MemoryBroadcastStore(), logger });
  closers.push(() => registry.close());
  return { sim, client, registry, logger, ids: users.map((user) => user.id) };
}

/** Fails if the bot token (or its secret half) is in any of `things`, errors' causes included. */
function expectNoToken(sim: BotApiSim, ...things: unknown[]): void {
  const text = things.map((thing) => inspect(thing, { depth: 20 })).join("\n");
  expect(text).not.toContain(sim.token);
  expect(text).not.toContain(sim.token.split(":")[1]);
}

/** Messages the bot sent into each chat. */
function messagesIn(sim: BotApiSim, chatIds: readonly number[]): number[] {
  return chatIds.map((id) => sim.transcript(id).messages.length);
}

describe("against the Bot API sim", () => {
  it("reaches everyone reachable once, records 403s and chat not found, follows a migration", async () => {
    const { sim, registry, ids } = await world({ users: 40 });
    const [blocked, stranger] = [sim.users.create(), sim.users.create()];
    sim.chats.createPrivate(blocked);
    sim.users.block(blocked);
    sim.chats.createPrivate(stranger, { started: false });
    const group = sim.chats.createGroup({ members: [ids[0] as number] });
    const supergroup = sim.chats.migrateToSupergroup(group);
    const recipients = [...ids, blocked.id, stranger.id, 987_654_321, group.id];
    const job = registry.start("e2e", {
      message: {
        method: "sendMessage",
        params: {
          text: "<b>News</b>",
          parse_mode: "HTML",
          reply_markup: { inline_keyboard: [[{ text: "Read", callback_data: "read" }]] },
        },
      },
      recipients,
    });
    const report = await job.result;
    expect(report).toMatchObject({
      status: "completed",
      total: recipients.length,
      counts: { sent: 41, blocked: 1, forbidden: 1, chatNotFound: 1, migrated: 1, failed: 0 },
    });
    expect(messagesIn(sim, ids)).toEqual(ids.map(() => 1));
    expect(sim.transcript(supergroup).messages.at(-1)).toMatchObject({
      text: "News",
      reply_markup: { inline_keyboard: [[{ text: "Read", callback_data: "read" }]] },
    });
    expect(sim.counters().tooManyRequests).toBe(0);
  });

  it("sends paid at up to 1000/s on a bot with paid broadcasts, and the Stars are counted", async () => {
    const { sim, registry, ids } = await world({ users: 400, paidBroadcasts: true });
    const job = registry.start("paid", {
      message: { method: "sendMessage", params: { text: "Flash sale" } },
      recipients: ids,
      paid: true,
    });
    const report = await job.result;
    expect(report).toMatchObject({ status: "completed", mode: "paid", counts: { sent: 400 } });
    expect(messagesIn(sim, ids)).toEqual(ids.map(() => 1));
    const counters = sim.counters();
    expect(counters.tooManyRequests).toBe(0);
    expect(counters.paidBroadcasts).toBe(400);
    // Each second's first 30 messages are free; the rest are billed (how many seconds it took
    // depends on the machine).
    expect(counters.paidBroadcastsBilled).toBeGreaterThan(0);
    expect(counters.paidBroadcastsBilled).toBeLessThanOrEqual(400 - 30);
    expect(counters.paidBroadcastStars).toBeCloseTo(counters.paidBroadcastsBilled / 10, 5);
  });

  it("falls back to the free pace on a bot without paid broadcasts, reaching everyone once", async () => {
    const { sim, registry, logger, ids } = await world({ users: 90 });
    using events = recordChannels<BroadcastEvent>(broadcastChannels);
    const job = registry.start("unpaid", {
      message: { method: "sendMessage", params: { text: "Flash sale" } },
      recipients: ids,
      paid: true,
    });
    const report = await job.result;
    expect(report).toMatchObject({
      status: "completed",
      mode: "paid-refused",
      counts: { sent: 90 },
    });
    expect(messagesIn(sim, ids)).toEqual(ids.map(() => 1));
    const counters = sim.counters();
    expect(counters.paidBroadcasts).toBe(0);
    // The refusal costs the 429s of the sends in flight when it came, then none.
    expect(counters.tooManyRequests).toBeGreaterThan(0);
    expect(counters.tooManyRequests).toBeLessThanOrEqual(32);
    // The refusal is said: a warning, an event, and the report's mode.
    expect(logger.calls.filter((call) => call.level === "warn")).toHaveLength(1);
    expect(events.events.filter((event) => event.type === "paid-refused")).toHaveLength(1);
    expectNoToken(sim, logger.text(), events.events, report, job.snapshot());
  }, 20_000);

  it("stops on a message Telegram refuses, paused in its store, the token in nothing it reports", async () => {
    const { sim, registry, logger, ids } = await world({ users: 60 });
    using events = recordChannels<BroadcastEvent>(broadcastChannels);
    const job = registry.start("broken", {
      message: { method: "sendMessage", params: { text: "<b>Sale", parse_mode: "HTML" } },
      recipients: ids,
      maxConsecutiveFailures: 5,
    });
    const report = await job.result;
    expect(report).toMatchObject({ status: "failed", error: { code: "ERR_BROADCAST_FAILING" } });
    expect((report.error as Error).cause).toMatchObject({
      message: expect.stringMatching(/parse entities/),
    });
    expect(report.counts.failed).toBeGreaterThanOrEqual(5);
    expect(report.counts.sent).toBe(0);
    expect(messagesIn(sim, ids).every((count) => count === 0)).toBe(true);
    expect(logger.calls.some((call) => call.level === "error")).toBe(true);
    expectNoToken(sim, logger.text(), events.events, report, job.snapshot());
  });
});

// getUpdates as Telegram's server implements it: offset confirmation (negative offsets too),
// clamped limit and timeout, true long polling, 409s for competing pollers and webhooks, sticky
// allowed_updates, the busy-loop guard, retention and the queue bound.

import { ManualClock } from "@telepace/core";
import { eventually } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, type BotApiSimError, start } from "../src/index.js";
import { call, expectTooManyRequests } from "./helpers.js";

let sim: BotApiSim;
let clock: ManualClock;

async function setup(options: Parameters<typeof start>[0] = {}) {
  clock = new ManualClock();
  sim = await start({ clock, rateLimits: false, ...options });
  const user = sim.users.create();
  const chat = sim.chats.createPrivate(user);
  return { user, chat };
}

afterEach(() => sim?.close());

const polling = () => sim.snapshot().bots[0]?.isPolling === true;

function ids(reply: { body: { result: Array<{ update_id: number }> } }): number[] {
  return reply.body.result.map((update) => update.update_id);
}

describe("offsets", () => {
  it("returns unconfirmed updates again until a higher offset confirms them", async () => {
    const { user, chat } = await setup();
    for (const text of ["a", "b", "c"]) sim.sendText(user, chat, text);
    const first = await call(sim, "getUpdates");
    expect(first.body.result).toHaveLength(3);
    expect(first.body.result[0].message).toMatchObject({
      text: "a",
      chat: { id: chat.id },
      from: { id: user.id },
    });
    const [a, b, c] = ids(first) as [number, number, number];
    expect([b - a, c - b]).toEqual([1, 1]);
    await clock.advance(3001);
    expect(ids(await call(sim, "getUpdates", { offset: b }))).toEqual([b, c]);
    await clock.advance(3001);
    expect(ids(await call(sim, "getUpdates"))).toEqual([b, c]);
    expect(sim.pendingUpdates()).toBe(2);
    await clock.advance(3001);
    expect(ids(await call(sim, "getUpdates", { offset: c + 1 }))).toEqual([]);
    expect(sim.pendingUpdates()).toBe(0);
  });

  it("a negative offset keeps only the last |offset| updates", async () => {
    const { user, chat } = await setup();
    for (let i = 0; i < 5; i++) sim.sendText(user, chat, `m${i}`);
    const last2 = await call(sim, "getUpdates", { offset: -2 });
    expect(last2.body.result.map((u: { message: { text: string } }) => u.message.text)).toEqual([
      "m3",
      "m4",
    ]);
    await clock.advance(3001);
    expect((await call(sim, "getUpdates")).body.result).toHaveLength(2);
  });

  it("an offset from the future falls back to the oldest pending update", async () => {
    const { user, chat } = await setup();
    sim.sendText(user, chat, "kept");
    const reply = await call(sim, "getUpdates", { offset: 2_000_000_000 });
    expect(reply.body.result).toHaveLength(1);
    expect(sim.pendingUpdates()).toBe(1);
  });
});

describe("update ids that restart", () => {
  it("restartUpdateIds numbers the next updates from `nextId`, so an old offset lies in the future", async () => {
    const { user, chat } = await setup();
    sim.sendText(user, chat, "old");
    const [old] = ids(await call(sim, "getUpdates")) as [number];
    await clock.advance(3001);
    expect(ids(await call(sim, "getUpdates", { offset: old + 1 }))).toEqual([]);
    sim.restartUpdateIds({ nextId: 7 });
    sim.sendText(user, chat, "new 1");
    sim.sendText(user, chat, "new 2");
    await clock.advance(3001);
    // The old offset is past the new numbering: the answer starts at its head, confirming nothing.
    expect(ids(await call(sim, "getUpdates", { offset: old + 1 }))).toEqual([7, 8]);
    expect(sim.pendingUpdates()).toBe(2);
    await clock.advance(3001);
    expect(ids(await call(sim, "getUpdates", { offset: 8 }))).toEqual([8]);
    expect(sim.pendingUpdates()).toBe(1);
  });

  it("refuses to restart while updates are pending, and checks its options", async () => {
    const { user, chat } = await setup();
    sim.sendText(user, chat, "pending");
    expect(() => sim.restartUpdateIds({ nextId: 1 })).toThrow(
      expect.objectContaining({ code: "ERR_INVALID_STATE" }) as never,
    );
    expect(() => sim.restartUpdateIds({ nextId: 0 })).toThrow(
      "Expected `nextId` to be an integer >= 1 and <= 2147483647, got 0",
    );
    expect(() => sim.restartUpdateIds({ nextid: 1 } as never)).toThrow("did you mean `nextId`?");
    expect(() => sim.restartUpdateIds(undefined as never)).toThrow(
      "Expected `nextId` to be an integer >= 1 and <= 2147483647, got undefined",
    );
  });
});

describe("clamping", () => {
  it("clamps limit to 1–100 instead of rejecting it", async () => {
    const { user, chat } = await setup();
    for (let i = 0; i < 120; i++) sim.sendText(user, chat, `m${i}`);
    expect((await call(sim, "getUpdates", { limit: 1000 })).body.result).toHaveLength(100);
    await clock.advance(3001);
    expect((await call(sim, "getUpdates", { limit: 0 })).body.result).toHaveLength(1);
    await clock.advance(3001);
    expect((await call(sim, "getUpdates", { limit: -5 })).body.result).toHaveLength(1);
  });

  it("clamps timeout to 50 s of long polling", async () => {
    await setup();
    let settled = false;
    const reply = call(sim, "getUpdates", { timeout: 100 }).then((r) => {
      settled = true;
      return r;
    });
    await eventually("the bot is polling", polling);
    await clock.advance(49_999);
    expect(settled).toBe(false);
    expect(polling()).toBe(true);
    await clock.advance(1);
    expect((await reply).body).toEqual({ ok: true, result: [] });
  });
});

describe("long polling", () => {
  it("parks a request with nothing to return and answers as soon as a user writes", async () => {
    const { user, chat } = await setup();
    const reply = call(sim, "getUpdates", { timeout: 30 });
    await eventually("the bot is polling", polling);
    sim.sendText(user, chat, "wake up");
    const result = (await reply).body.result;
    expect(result).toHaveLength(1);
    expect(result[0].message.text).toBe("wake up");
    expect(polling()).toBe(false);
  });

  it("answers with every update queued in the same step", async () => {
    const { user, chat } = await setup();
    const reply = call(sim, "getUpdates", { timeout: 30 });
    await eventually("the bot is polling", polling);
    sim.sendText(user, chat, "one");
    sim.sendText(user, chat, "two");
    expect((await reply).body.result).toHaveLength(2);
  });

  it("forgets a parked request whose client went away, confirming nothing", async () => {
    const { user, chat } = await setup();
    const controller = new AbortController();
    const reply = call(sim, "getUpdates", { timeout: 30 }, { signal: controller.signal });
    await eventually("the bot is polling", polling);
    controller.abort();
    await expect(reply).rejects.toThrow();
    await eventually("the poll ended", () => !polling());
    sim.sendText(user, chat, "later");
    await clock.advance(3001);
    expect((await call(sim, "getUpdates")).body.result).toHaveLength(1);
  });

  it("parks a same-offset short poll for 3 s (the server's busy-loop guard)", async () => {
    await setup();
    expect((await call(sim, "getUpdates")).body.result).toEqual([]);
    const second = call(sim, "getUpdates");
    await eventually("the bot is polling", polling);
    await clock.advance(3000);
    expect((await second).body.result).toEqual([]);
  });

  it("answers only one update to a same-offset call within 0.5 s", async () => {
    const { user, chat } = await setup();
    sim.sendText(user, chat, "a");
    sim.sendText(user, chat, "b");
    expect((await call(sim, "getUpdates")).body.result).toHaveLength(2);
    expect((await call(sim, "getUpdates")).body.result).toHaveLength(1);
  });
});

describe("409 Conflict", () => {
  it("ends the older parked request when another poller arrives", async () => {
    await setup();
    const older = call(sim, "getUpdates", { timeout: 30 });
    await eventually("the bot is polling", polling);
    const newer = call(sim, "getUpdates", { timeout: 30, offset: 5 });
    expect((await older).body).toEqual({
      ok: false,
      error_code: 409,
      description:
        "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
    });
    await eventually("the bot is polling", polling);
    await clock.advance(30_000);
    expect((await newer).body.result).toEqual([]);
    expect(sim.counters().conflicts).toBe(1);
  });

  it("sends at most one 409 per 3 s and holds the next one back", async () => {
    await setup();
    const first = call(sim, "getUpdates", { timeout: 30 });
    await eventually("the bot is polling", polling);
    const second = call(sim, "getUpdates", { timeout: 30, offset: 1 });
    expect((await first).status).toBe(409);
    await eventually("the bot is polling", polling);
    let settled = false;
    const third = call(sim, "getUpdates", { timeout: 30, offset: 2 });
    second.then(() => {
      settled = true;
    });
    await eventually("two conflicts were counted", () => sim.counters().conflicts === 2);
    await clock.advance(2999);
    expect(settled).toBe(false);
    await clock.advance(1);
    expect((await second).status).toBe(409);
    await clock.advance(30_000);
    expect((await third).body.result).toEqual([]);
  });

  it("refuses getUpdates while a webhook is set", async () => {
    await setup();
    expect((await call(sim, "setWebhook", { url: "https://example.org/hook" })).body).toEqual({
      ok: true,
      result: true,
      description: "Webhook was set",
    });
    expect((await call(sim, "getUpdates")).body).toEqual({
      ok: false,
      error_code: 409,
      description:
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
    });
    await call(sim, "deleteWebhook");
    expect((await call(sim, "getUpdates")).body.ok).toBe(true);
  });

  it("setWebhook ends a parked long poll", async () => {
    await setup();
    const parked = call(sim, "getUpdates", { timeout: 30 });
    await eventually("the bot is polling", polling);
    await call(sim, "setWebhook", { url: "https://example.org/hook" });
    expect((await parked).body.description).toBe("Conflict: terminated by setWebhook request");
  });
});

describe("allowed_updates", () => {
  it("is sticky, filters updates created afterwards, and [] restores the default", async () => {
    const { user, chat } = await setup();
    const sent = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "press",
      reply_markup: { inline_keyboard: [[{ text: "ok", callback_data: "ok" }]] },
    });
    await call(sim, "getUpdates", { allowed_updates: ["callback_query"] });
    sim.sendText(user, chat, "filtered out");
    sim.pressButton(user, chat, sent.body.result.message_id, "ok");
    await clock.advance(3001);
    const kept = (await call(sim, "getUpdates")).body.result;
    expect(kept.map((u: object) => Object.keys(u)[1])).toEqual(["callback_query"]);
    expect(sim.counters().updatesFiltered).toBe(1);
    expect(sim.snapshot().bots[0]?.allowedUpdates).toEqual(["callback_query"]);
    await call(sim, "getUpdates", { offset: kept[0].update_id + 1, allowed_updates: "[]" });
    sim.sendText(user, chat, "back to default");
    await clock.advance(3001);
    expect(
      (await call(sim, "getUpdates", { offset: kept[0].update_id + 1 })).body.result,
    ).toHaveLength(1);
  });

  it("leaves chat_member out by default and delivers it when asked", async () => {
    const { user } = await setup();
    const group = sim.chats.createGroup({ members: [user], botsAreAdmins: true });
    const newcomer = sim.users.create();
    sim.chats.addMember(group, newcomer);
    const types = (await call(sim, "getUpdates")).body.result.map((u: object) => Object.keys(u)[1]);
    expect(types).toEqual(["my_chat_member", "message", "message"]);
    await call(sim, "getUpdates", { offset: -1, allowed_updates: ["chat_member", "message"] });
    sim.chats.addMember(group, sim.users.create());
    await clock.advance(3001);
    const next = (await call(sim, "getUpdates", { offset: -2 })).body.result.map(
      (u: object) => Object.keys(u)[1],
    );
    expect(next).toEqual(["chat_member", "message"]);
  });
});

describe("webhook state", () => {
  it("reports the webhook and the pending update count", async () => {
    const { user, chat } = await setup();
    sim.sendText(user, chat, "pending");
    expect((await call(sim, "getWebhookInfo")).body.result).toEqual({
      url: "",
      has_custom_certificate: false,
      pending_update_count: 1,
    });
    await call(sim, "setWebhook", {
      url: "https://example.org/hook",
      max_connections: 7,
      allowed_updates: ["message"],
    });
    expect((await call(sim, "getWebhookInfo")).body.result).toEqual({
      url: "https://example.org/hook",
      has_custom_certificate: false,
      pending_update_count: 1,
      max_connections: 7,
      allowed_updates: ["message"],
    });
  });

  it("describes repeated and deleting calls like Telegram, and drops pending updates on request", async () => {
    const { user, chat } = await setup();
    await call(sim, "setWebhook", { url: "https://example.org/hook" });
    await clock.advance(1000);
    expect(
      (await call(sim, "setWebhook", { url: "https://example.org/hook" })).body.description,
    ).toBe("Webhook is already set");
    sim.sendText(user, chat, "dropped");
    expect(
      (await call(sim, "deleteWebhook", { drop_pending_updates: true })).body.description,
    ).toBe("Webhook was deleted");
    expect(sim.pendingUpdates()).toBe(0);
    expect((await call(sim, "deleteWebhook")).body.description).toBe("Webhook is already deleted");
  });

  it("allows one setWebhook with a URL per second", async () => {
    await setup();
    await call(sim, "setWebhook", { url: "https://example.org/a" });
    const second = await call(sim, "setWebhook", { url: "https://example.org/b" });
    expectTooManyRequests(second, 1);
  });

  it("checks the URL scheme and port", async () => {
    await setup();
    expect(
      (await call(sim, "setWebhook", { url: "http://example.org/hook" })).body.description,
    ).toBe("Bad Request: bad webhook: An HTTPS URL must be provided for webhook");
    await clock.advance(1000);
    expect(
      (await call(sim, "setWebhook", { url: "https://example.org:1234/hook" })).body.description,
    ).toBe("Bad Request: bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443");
  });
});

describe("bounds", () => {
  it("forgets updates older than the retention time", async () => {
    const { user, chat } = await setup({ updateRetentionMs: 60_000 });
    sim.sendText(user, chat, "old");
    await clock.advance(60_001);
    sim.sendText(user, chat, "new");
    const texts = (await call(sim, "getUpdates")).body.result.map(
      (u: { message: { text: string } }) => u.message.text,
    );
    expect(texts).toEqual(["new"]);
  });

  it("refuses a user action at maxPendingUpdates and changes nothing", async () => {
    const { user, chat } = await setup({ maxPendingUpdates: 2 });
    sim.sendText(user, chat, "1");
    sim.sendText(user, chat, "2");
    expect(() => sim.sendText(user, chat, "3")).toThrow(
      expect.objectContaining({ code: "ERR_UPDATE_QUEUE_FULL" }) as BotApiSimError,
    );
    expect(sim.transcript(chat).messages).toHaveLength(2);
    const updates = (await call(sim, "getUpdates")).body.result;
    await call(sim, "getUpdates", { offset: updates[1].update_id + 1 });
    expect(sim.sendText(user, chat, "3").text).toBe("3");
  });
});

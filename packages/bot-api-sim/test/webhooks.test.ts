// Webhook delivery over real HTTP on loopback: each update POSTed as JSON with the secret token
// header, confirmed by a 2xx, retried otherwise; per-chat order, max_connections, getWebhookInfo,
// deleteWebhook, webhook replies, and which URLs are delivered to at all.

import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Update } from "@grammyjs/types";
import { eventually } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, start } from "../src/index.js";
import { call } from "./helpers.js";

interface Received {
  readonly headers: IncomingMessage["headers"];
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly update: Update;
}

type Answer = (received: Received, res: ServerResponse) => void | Promise<void>;

/** A webhook receiver on loopback that records every request and answers with `answer`. */
class Receiver {
  readonly received: Received[] = [];
  answer: Answer = (_received, res) => {
    res.end();
  };
  readonly #server: Server;

  constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const received: Received = {
          headers: req.headers,
          method: req.method,
          url: req.url,
          update: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Update,
        };
        this.received.push(received);
        void this.answer(received, res);
      });
    });
  }

  async listen(port = 0): Promise<string> {
    this.#server.listen(port, "127.0.0.1");
    await once(this.#server, "listening");
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  get texts(): string[] {
    return this.received.map((r) => r.update.message?.text ?? "");
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    this.#server.close();
    await once(this.#server, "close");
  }
}

let sim: BotApiSim | undefined;
const receivers: Receiver[] = [];
afterEach(async () => {
  await sim?.close({ timeoutMs: 500 });
  sim = undefined;
  for (const receiver of receivers.splice(0)) await receiver.close();
});

async function setup(simOptions: Parameters<typeof start>[0] = {}) {
  sim = await start({ rateLimits: false, timeScale: 100, ...simOptions });
  const receiver = new Receiver();
  receivers.push(receiver);
  const url = await receiver.listen();
  return { sim, receiver, url };
}

const info = async (s: BotApiSim) => (await call(s, "getWebhookInfo")).body.result;

describe("webhook delivery", () => {
  it("POSTs each update as JSON with the secret token, and a 2xx confirms it", async () => {
    const { sim, receiver, url } = await setup();
    const alice = sim.users.create();
    const chat = sim.chats.createPrivate(alice);
    sim.sendText(alice, chat, "before the webhook");
    const set = await call(sim, "setWebhook", { url, secret_token: "s3cret_-X" });
    expect(set.body).toEqual({ ok: true, result: true, description: "Webhook was set" });
    sim.sendText(alice, chat, "after");
    await eventually("both delivered", () => expect(receiver.texts).toHaveLength(2));
    expect(receiver.texts).toEqual(["before the webhook", "after"]);
    const [first] = receiver.received as [Received];
    expect(first.method).toBe("POST");
    expect(first.url).toBe("/hook");
    expect(first.headers["content-type"]).toBe("application/json");
    expect(first.headers["x-telegram-bot-api-secret-token"]).toBe("s3cret_-X");
    expect(first.update.message).toMatchObject({ chat: { id: chat.id }, from: { id: alice.id } });
    await eventually("confirmed", async () =>
      expect((await info(sim)).pending_update_count).toBe(0),
    );
    expect(await info(sim)).toEqual({
      url,
      has_custom_certificate: false,
      pending_update_count: 0,
      max_connections: 40,
      ip_address: "127.0.0.1",
    });
    expect(sim.counters()).toMatchObject({ webhookRequests: 2, webhookConfirmed: 2 });
    // getUpdates is refused while the webhook is set.
    expect((await call(sim, "getUpdates")).status).toBe(409);
  });

  it("sends no secret header without secret_token and refuses a bad one", async () => {
    const { sim, receiver, url } = await setup();
    const long = await call(sim, "setWebhook", { url, secret_token: "x".repeat(257) });
    expect(long.body.description).toBe("Bad Request: secret token is too long");
    await new Promise((resolve) => setTimeout(resolve, 20)); // one setWebhook per (scaled) second
    const bad = await call(sim, "setWebhook", { url, secret_token: "no spaces" });
    expect(bad.body.description).toBe("Bad Request: secret token contains unallowed characters");
    await new Promise((resolve) => setTimeout(resolve, 20));
    await call(sim, "setWebhook", { url });
    const user = sim.users.create();
    sim.sendText(user, sim.chats.createPrivate(user), "hi");
    await eventually("delivered", () => expect(receiver.received).toHaveLength(1));
    expect(receiver.received[0]?.headers["x-telegram-bot-api-secret-token"]).toBeUndefined();
  });

  it("keeps each chat's updates in order, one at a time, and runs chats in parallel up to max_connections", async () => {
    const { sim, receiver, url } = await setup();
    let open = 0;
    let peak = 0;
    const openChats = new Set<number>();
    let sameChatOverlap = false;
    receiver.answer = async (received, res) => {
      const chatId = received.update.message?.chat.id as number;
      if (openChats.has(chatId)) sameChatOverlap = true;
      openChats.add(chatId);
      peak = Math.max(peak, ++open);
      await new Promise((resolve) => setTimeout(resolve, 15));
      open--;
      openChats.delete(chatId);
      res.end();
    };
    await call(sim, "setWebhook", { url, max_connections: 3 });
    const users = Array.from({ length: 6 }, () => sim.users.create());
    const chats = users.map((user) => sim.chats.createPrivate(user));
    for (let round = 0; round < 4; round++) {
      for (const [i, user] of users.entries())
        sim.sendText(user, chats[i] as never, `${i}:${round}`);
    }
    await eventually("all delivered", () => expect(receiver.received).toHaveLength(24), {
      timeoutMs: 15_000,
    });
    expect(sameChatOverlap).toBe(false);
    expect(peak).toBe(3);
    for (const [i] of users.entries()) {
      expect(receiver.texts.filter((text) => text.startsWith(`${i}:`))).toEqual([
        `${i}:0`,
        `${i}:1`,
        `${i}:2`,
        `${i}:3`,
      ]);
    }
  });

  it("retries a non-2xx answer, holding the chat's next update, and reports the error", async () => {
    const { sim, receiver, url } = await setup();
    let failures = 2;
    receiver.answer = (_received, res) => {
      res.statusCode = failures-- > 0 ? 500 : 200;
      res.end();
    };
    await call(sim, "setWebhook", { url });
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    sim.sendText(user, chat, "first");
    sim.sendText(user, chat, "second");
    await eventually("the second failure", async () =>
      expect(await info(sim)).toMatchObject({
        pending_update_count: 2,
        last_error_message: "Wrong response from the webhook: 500 Internal Server Error",
      }),
    );
    expect(typeof (await info(sim)).last_error_date).toBe("number");
    // 2 s (Telegram time) later the first arrives, then the second.
    await eventually("both confirmed", () => expect(receiver.texts).toHaveLength(4));
    expect(receiver.texts).toEqual(["first", "first", "first", "second"]);
    await eventually("none pending", async () =>
      expect((await info(sim)).pending_update_count).toBe(0),
    );
    expect(sim.counters()).toMatchObject({ webhookFailures: 2, webhookConfirmed: 2 });
  });

  it("honours the webhook's Retry-After", async () => {
    const { sim, receiver, url } = await setup({ timeScale: 10 });
    const at: number[] = [];
    receiver.answer = (_received, res) => {
      at.push(performance.now());
      if (at.length === 1) res.writeHead(503, { "Retry-After": "3" });
      res.end();
    };
    await call(sim, "setWebhook", { url });
    const user = sim.users.create();
    sim.sendText(user, sim.chats.createPrivate(user), "hi");
    await eventually("retried", () => expect(at).toHaveLength(2));
    // 3 s of Telegram time at ×10; the first retry would otherwise go out at once.
    expect((at[1] as number) - (at[0] as number)).toBeGreaterThanOrEqual(290);
  });

  it("retries when nobody listens (Connection refused) and delivers once the receiver is up", async () => {
    const { sim, receiver, url } = await setup();
    const port = Number(new URL(url).port);
    await receiver.close();
    receivers.splice(receivers.indexOf(receiver), 1);
    await call(sim, "setWebhook", { url });
    const user = sim.users.create();
    sim.sendText(user, sim.chats.createPrivate(user), "waiting");
    await eventually("refused", async () =>
      expect((await info(sim)).last_error_message).toBe("Connection refused"),
    );
    const late = new Receiver();
    receivers.push(late);
    await late.listen(port);
    await eventually("delivered", () => expect(late.texts).toEqual(["waiting"]), {
      timeoutMs: 15_000,
    });
  });

  it("deleteWebhook stops delivery; what is unconfirmed goes to getUpdates, unless dropped", async () => {
    const { sim, receiver, url } = await setup();
    receiver.answer = () => {}; // never answers
    await call(sim, "setWebhook", { url });
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    sim.sendText(user, chat, "stuck");
    sim.sendText(user, chat, "behind");
    await eventually("in flight", () => expect(sim?.snapshot().bots[0]?.webhookInFlight).toBe(1));
    expect((await call(sim, "deleteWebhook")).body.description).toBe("Webhook was deleted");
    expect(sim.snapshot().bots[0]?.webhookInFlight).toBe(0);
    const polled = (await call(sim, "getUpdates")).body.result as Update[];
    expect(polled.map((u) => u.message?.text)).toEqual(["stuck", "behind"]);
    expect(await info(sim)).toEqual({
      url: "",
      has_custom_certificate: false,
      pending_update_count: 2,
    });

    await new Promise((resolve) => setTimeout(resolve, 20));
    receiver.answer = (_received, res) => {
      res.end();
    };
    await call(sim, "setWebhook", { url, drop_pending_updates: true });
    sim.sendText(user, chat, "fresh");
    await eventually("the new one", () => expect(receiver.texts.at(-1)).toBe("fresh"));
    expect(receiver.texts.filter((text) => text === "behind")).toEqual([]);
  });

  it("runs the method a webhook answers with (a webhook reply)", async () => {
    const { sim, receiver, url } = await setup();
    receiver.answer = (received, res) => {
      const message = received.update.message;
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(
        JSON.stringify({ method: "sendMessage", chat_id: message?.chat.id, text: "replied" }),
      );
    };
    await call(sim, "setWebhook", { url });
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    sim.sendText(user, chat, "hello");
    const reply = await sim.waitForMessage(chat, undefined, { timeoutMs: 5_000 });
    expect(reply.text).toBe("replied");
    expect(sim.counters()).toMatchObject({ webhookReplies: 1 });
    expect(sim.counters().calls.sendMessage).toBe(1);
  });

  it("delivers to loopback on any port over HTTP, and never connects elsewhere", async () => {
    const { sim, receiver, url } = await setup();
    await call(sim, "setWebhook", { url: "https://example.org/hook", ip_address: "203.0.113.9" });
    const user = sim.users.create();
    sim.sendText(user, sim.chats.createPrivate(user), "kept");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sim.counters().webhookRequests).toBe(0);
    expect(await info(sim)).toEqual({
      url: "https://example.org/hook",
      has_custom_certificate: false,
      pending_update_count: 1,
      max_connections: 40,
      ip_address: "203.0.113.9",
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // A public host given a loopback ip_address is delivered to there.
    const port = new URL(url).port;
    await call(sim, "setWebhook", { url: `http://localhost:${port}/hook` });
    await eventually("delivered", () => expect(receiver.texts).toEqual(["kept"]));
  });

  it("publishes every attempt on the webhook channel, without the token", async () => {
    const { sim, receiver, url } = await setup();
    const { subscribe, unsubscribe } = await import("node:diagnostics_channel");
    const events: unknown[] = [];
    const listener = (message: unknown) => events.push(message);
    subscribe("telepace:bot-api-sim:webhook", listener);
    try {
      let first = true;
      receiver.answer = (_received, res) => {
        res.statusCode = first ? 502 : 204;
        first = false;
        res.end();
      };
      await call(sim, "setWebhook", { url });
      const user = sim.users.create();
      sim.sendText(user, sim.chats.createPrivate(user), "hi");
      await eventually("two attempts", () => expect(events).toHaveLength(2));
      expect(events).toMatchObject([
        { type: "webhook", botId: sim.bot.id, outcome: "failed", status: 502, failures: 0 },
        { type: "webhook", outcome: "confirmed", status: 204, failures: 1 },
      ]);
      expect(JSON.stringify(events)).not.toContain(sim.token);
    } finally {
      unsubscribe("telepace:bot-api-sim:webhook", listener);
    }
  });
});

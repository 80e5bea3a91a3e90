// Injected faults over real HTTP: failing the next N calls (before or after they take effect),
// connection resets, malformed bodies, a random 5xx rate and latency, on API calls and downloads.

import { ManualClock } from "@telepace/core";
import { eventually } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, start } from "../src/index.js";
import { call, expectTooManyRequests, raw } from "./helpers.js";

let sim: BotApiSim;

async function setup(options: Parameters<typeof start>[0] = {}) {
  sim = await start({ rateLimits: false, ...options });
  const user = sim.users.create();
  return { user, chat: sim.chats.createPrivate(user) };
}

afterEach(() => sim?.close());

const send = (chatId: number, text = "x") => call(sim, "sendMessage", { chat_id: chatId, text });

describe("failNext", () => {
  it("fails exactly the next N calls of the method with the given code, then recovers", async () => {
    const { chat } = await setup();
    sim.faults.failNext("sendMessage", 2, { code: 502 });
    expect(await send(chat.id).then((r) => r.body)).toEqual({
      ok: false,
      error_code: 502,
      description: "Bad Gateway",
    });
    expect((await send(chat.id)).status).toBe(502);
    expect((await send(chat.id)).status).toBe(200);
    expect(sim.transcript(chat).messages).toHaveLength(1);
    expect(sim.counters().faultsInjected).toBe(2);
  });

  it("matches method names in any case and leaves other methods alone", async () => {
    const { chat } = await setup();
    sim.faults.failNext("SENDMESSAGE", 1);
    expect((await call(sim, "getMe")).status).toBe(200);
    expect((await call(sim, "sendmessage", { chat_id: chat.id, text: "x" })).status).toBe(500);
  });

  it("can inject a 429 with retry_after and the header", async () => {
    const { chat } = await setup();
    sim.faults.failNext("sendMessage", 1, { code: 429, retryAfter: 7 });
    const reply = await send(chat.id);
    expectTooManyRequests(reply, 7);
  });

  it("afterProcessing lets the call take effect and still answers the error", async () => {
    const { chat } = await setup();
    sim.faults.failNext("sendMessage", 1, { code: 504, afterProcessing: true });
    expect((await send(chat.id, "delivered anyway")).status).toBe(504);
    expect(sim.transcript(chat).messages.map((m) => ("text" in m ? m.text : ""))).toEqual([
      "delivered anyway",
    ]);
  });

  it("'*' applies to any method", async () => {
    await setup();
    sim.faults.failNext("*", 1, { code: 503 });
    expect((await call(sim, "getMe")).status).toBe(503);
    expect((await call(sim, "getMe")).status).toBe(200);
  });

  it("validates its arguments", async () => {
    await setup();
    expect(() => sim.faults.failNext("getMe", 0)).toThrow(
      "Expected `count` to be an integer >= 1, got 0",
    );
    expect(() => sim.faults.failNext("getMe", 1, { code: 200 })).toThrow(
      "Expected `code` to be an integer >= 400 and <= 599, got 200",
    );
  });
});

describe("resetNext", () => {
  it("drops the connection before the call takes effect", async () => {
    const { chat } = await setup();
    sim.faults.resetNext("sendMessage");
    await expect(send(chat.id)).rejects.toThrow();
    expect(sim.transcript(chat).messages).toEqual([]);
    expect((await send(chat.id)).status).toBe(200);
  });

  it("afterProcessing drops it after the message was sent (maybe-delivered)", async () => {
    const { chat } = await setup();
    sim.faults.resetNext("sendMessage", 1, { afterProcessing: true });
    await expect(send(chat.id, "did it arrive?")).rejects.toThrow();
    expect(sim.transcript(chat).messages).toHaveLength(1);
  });
});

describe("malformNext", () => {
  it("answers 200 with a body that is not valid JSON", async () => {
    await setup();
    sim.faults.malformNext("getMe");
    const reply = await call(sim, "getMe");
    expect(reply.status).toBe(200);
    expect(reply.body).toBeUndefined();
    expect(() => JSON.parse(reply.text)).toThrow();
  });
});

describe("setErrorRate", () => {
  it("fails the given fraction of calls, driven by the injected random source", async () => {
    const rolls = [0.05, 0.5, 0.09, 0.95];
    let i = 0;
    const { chat } = await setup({ random: () => rolls[i++ % rolls.length] as number });
    sim.faults.setErrorRate(0.1, { code: 502, methods: ["sendMessage"] });
    const statuses = [];
    for (let n = 0; n < 4; n++) statuses.push((await send(chat.id)).status);
    expect(statuses).toEqual([502, 200, 502, 200]);
    expect((await call(sim, "getMe")).status).toBe(200);
    sim.faults.setErrorRate(0);
    expect((await send(chat.id)).status).toBe(200);
  });

  it("'*' in methods means every method", async () => {
    const { chat } = await setup();
    sim.faults.setErrorRate(1, { code: 502, methods: ["*"] });
    expect((await call(sim, "getMe")).status).toBe(502);
    expect((await send(chat.id)).status).toBe(502);
    sim.faults.setErrorRate(0);
  });
});

describe("setLatency", () => {
  it("delays answers by the simulator clock", async () => {
    const clock = new ManualClock();
    await setup({ clock });
    sim.faults.setLatency(5000, { methods: ["getMe"] });
    let settled = false;
    const reply = call(sim, "getMe").then((r) => {
      settled = true;
      return r;
    });
    await eventually("one timer is pending", () => clock.pendingTimers === 1);
    await clock.advance(4999);
    expect(settled).toBe(false);
    await clock.advance(1);
    expect((await reply).status).toBe(200);
    sim.faults.setLatency(0);
    expect((await call(sim, "getMe")).status).toBe(200);
  });

  it("'*' delays every method, as it fails every method", async () => {
    const clock = new ManualClock();
    const { chat } = await setup({ clock });
    sim.faults.setLatency(300, { methods: ["*"] });
    let settled = 0;
    const replies = [
      call(sim, "getMe"),
      call(sim, "getUpdates", { timeout: 0 }),
      send(chat.id),
    ].map((reply) => reply.then(() => settled++));
    await eventually("three timers are pending", () => clock.pendingTimers === 3);
    await clock.advance(299);
    expect(settled).toBe(0);
    await clock.advance(1);
    await Promise.all(replies);
    expect(settled).toBe(3);
  });
});

describe("downloads", () => {
  async function filePath(): Promise<string> {
    const { user, chat } = await setup();
    const sent = sim.sendDocument(user, chat, {
      bytes: Buffer.alloc(10_000, 7),
      fileName: "f.bin",
    });
    const fileId = (sent as { document: { file_id: string } }).document.file_id;
    return (await call(sim, "getFile", { file_id: fileId })).body.result.file_path;
  }

  it("'download' fails, resets or garbles file downloads only", async () => {
    const path = await filePath();
    const url = `/file/bot${sim.token}/${path}`;
    sim.faults.failNext("download", 1, { code: 500 });
    expect((await raw(sim, url)).status).toBe(500);
    sim.faults.resetNext("download");
    await expect(raw(sim, url)).rejects.toThrow();
    sim.faults.malformNext("download");
    const garbled = await raw(sim, url);
    expect(garbled.headers["content-type"]).toBe("text/html");
    expect((await raw(sim, url)).text.length).toBe(10_000);
  });

  it("a reset after processing cuts the body half-way", async () => {
    const path = await filePath();
    sim.faults.resetNext("download", 1, { afterProcessing: true });
    await expect(raw(sim, `/file/bot${sim.token}/${path}`)).rejects.toThrow();
    expect(sim.counters().bytesServed).toBe(5000);
  });
});

describe("clear", () => {
  it("removes queued faults, the error rate and latency", async () => {
    await setup();
    sim.faults.failNext("getMe", 5);
    sim.faults.setErrorRate(1);
    sim.faults.setLatency(10);
    expect(sim.snapshot().pendingFaults).toEqual({ getme: 5 });
    sim.faults.clear();
    expect(sim.snapshot().pendingFaults).toEqual({});
    expect((await call(sim, "getMe")).status).toBe(200);
  });
});

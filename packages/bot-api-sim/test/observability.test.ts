// Observability without leaks: the logger, diagnostics_channel messages, snapshots and error
// responses never contain a token, even when the token shows up in an internal error.

import { recordChannels, spyLogger, unhandledRejectionsOf } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, botApiSimChannels, start } from "../src/index.js";
import { call, raw } from "./helpers.js";

let sim: BotApiSim | undefined;
afterEach(() => sim?.close());

describe("secrets", () => {
  it("no log line, channel message, snapshot or response carries the token", async () => {
    const logger = spyLogger();
    using recorder = recordChannels(botApiSimChannels);
    const published = recorder.events;
    const running = await start({ logger });
    sim = running;
    const secret = running.token.split(":")[1] as string;
    const user = running.users.create();
    const chat = running.chats.createPrivate(user);
    running.sendText(user, chat, "hi");
    for (let i = 0; i < 5; i++)
      await call(running, "sendMessage", { chat_id: chat.id, text: `m${i}` });
    running.faults.failNext("getMe", 1, { code: 500 });
    await call(running, "getMe");
    await call(running, "getUpdates");
    await raw(running, `/bot${running.token}/nope`);
    await raw(running, `/file/bot${running.token}/documents/none`);
    expect(logger.calls.length).toBeGreaterThan(5);
    expect(published.length).toBeGreaterThan(5);
    const everything = JSON.stringify([
      logger.text(),
      published,
      running.snapshot(),
      running.counters(),
    ]);
    expect(everything).not.toContain(secret);
  });

  it("an internal error answers 500 and logs it with the token redacted", async () => {
    const logger = spyLogger();
    let token = "";
    let broken = false;
    const running = await start({
      logger,
      random: () => {
        if (broken) throw new Error(`broken random source near ${token}`);
        return 0.5;
      },
    });
    sim = running;
    token = running.token;
    broken = true;
    running.faults.setErrorRate(0.5);
    const reply = await call(running, "getMe");
    expect(reply.body).toEqual({
      ok: false,
      error_code: 500,
      description: "Internal Server Error",
    });
    const errorCall = logger.calls.find((entry) => entry.level === "error");
    expect(JSON.stringify(errorCall)).toContain("broken random source near <token>");
    expect(logger.text()).not.toContain(token.split(":")[1]);
    broken = false;
    expect((await call(running, "getMe")).status).toBe(200);
  });
});

describe("a failing logger", () => {
  it("neither a throw nor a rejected promise from the logger reaches the caller", async () => {
    const logger = spyLogger({
      answer: () => {
        if (logger.calls.length % 2 === 0) throw new Error("sync logger failure");
        return Promise.reject(new Error("async logger failure"));
      },
    });
    const unhandled = await unhandledRejectionsOf(async () => {
      const running = await start({ logger });
      sim = running;
      const user = running.users.create();
      const chat = running.chats.createPrivate(user);
      for (let i = 0; i < 5; i++) {
        expect(
          (await call(running, "sendMessage", { chat_id: chat.id, text: `m${i}` })).status,
        ).toBeOneOf([200, 429]);
      }
      running.faults.failNext("getMe", 1, { code: 502 });
      expect((await call(running, "getMe")).status).toBe(502);
      expect((await call(running, "getMe")).status).toBe(200);
    });
    expect(logger.calls.length).toBeGreaterThan(5);
    expect(unhandled).toEqual([]);
  });
});

describe("diagnostics_channel", () => {
  it("publishes requests, floods, updates and faults", async () => {
    using recorder = recordChannels<{ readonly type: string }>(botApiSimChannels);
    const seen = (type: string) => recorder.events.filter((event) => event.type === type);
    const running = await start();
    sim = running;
    const user = running.users.create();
    const chat = running.chats.createPrivate(user);
    running.sendText(user, chat, "update");
    for (let i = 0; i < 4; i++) await call(running, "sendMessage", { chat_id: chat.id, text: "x" });
    running.faults.resetNext("getMe");
    await expect(call(running, "getMe")).rejects.toThrow();
    expect(seen("update")).toEqual([
      {
        type: "update",
        botId: running.bot.id,
        updateId: expect.any(Number),
        updateType: "message",
      },
    ]);
    expect(seen("rate-limited")).toEqual([
      {
        type: "rate-limited",
        botId: running.bot.id,
        chatId: chat.id,
        method: "sendMessage",
        retryAfter: 1,
        scope: "chat",
      },
    ]);
    expect(seen("request")).toContainEqual({
      type: "request",
      botId: running.bot.id,
      method: "sendMessage",
      status: 429,
      durationMs: expect.any(Number),
    });
    expect(seen("fault")).toEqual([{ type: "fault", method: "getMe", fault: "reset" }]);
    expect(Object.isFrozen(seen("fault")[0])).toBe(true);
  });
});

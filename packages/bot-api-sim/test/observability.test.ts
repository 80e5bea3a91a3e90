// Observability without leaks: the logger, diagnostics_channel messages, snapshots and error
// responses never contain a token, even when the token shows up in an internal error.

import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, botApiSimChannels, type Logger, start } from "../src/index.js";
import { call, raw } from "./helpers.js";

let sim: BotApiSim | undefined;
afterEach(() => sim?.close());

function recordingLogger(lines: string[]): Logger {
  const log = (level: string) => (fields: Record<string, unknown>, message: string) => {
    lines.push(`${level} ${message} ${JSON.stringify(fields)}`);
  };
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}

describe("secrets", () => {
  it("no log line, channel message, snapshot or response carries the token", async () => {
    const lines: string[] = [];
    const published: unknown[] = [];
    const listener = (message: unknown) => published.push(message);
    for (const name of Object.values(botApiSimChannels)) subscribe(name, listener);
    try {
      const running = await start({ logger: recordingLogger(lines) });
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
      expect(lines.length).toBeGreaterThan(5);
      expect(published.length).toBeGreaterThan(5);
      const everything = JSON.stringify([lines, published, running.snapshot(), running.counters()]);
      expect(everything).not.toContain(secret);
    } finally {
      for (const name of Object.values(botApiSimChannels)) unsubscribe(name, listener);
    }
  });

  it("an internal error answers 500 and logs it with the token redacted", async () => {
    const lines: string[] = [];
    let token = "";
    let broken = false;
    const running = await start({
      logger: recordingLogger(lines),
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
    const errorLine = lines.find((line) => line.startsWith("error"));
    expect(errorLine).toContain("broken random source near <token>");
    expect(lines.join("\n")).not.toContain(token.split(":")[1]);
    broken = false;
    expect((await call(running, "getMe")).status).toBe(200);
  });
});

describe("a failing logger", () => {
  it("neither a throw nor a rejected promise from the logger reaches the caller", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      let calls = 0;
      const failing = (_fields: Record<string, unknown>, _message: string) => {
        calls++;
        if (calls % 2 === 0) throw new Error("sync logger failure");
        return Promise.reject(new Error("async logger failure"));
      };
      const running = await start({
        logger: { debug: failing, info: failing, warn: failing, error: failing },
      });
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
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(calls).toBeGreaterThan(5);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});

describe("diagnostics_channel", () => {
  it("publishes requests, floods, updates and faults", async () => {
    const seen = new Map<string, unknown[]>();
    const listeners = Object.values(botApiSimChannels).map((name) => {
      const listener = (message: unknown) => seen.set(name, [...(seen.get(name) ?? []), message]);
      subscribe(name, listener);
      return [name, listener] as const;
    });
    try {
      const running = await start();
      sim = running;
      const user = running.users.create();
      const chat = running.chats.createPrivate(user);
      running.sendText(user, chat, "update");
      for (let i = 0; i < 4; i++)
        await call(running, "sendMessage", { chat_id: chat.id, text: "x" });
      running.faults.resetNext("getMe");
      await expect(call(running, "getMe")).rejects.toThrow();
      expect(seen.get(botApiSimChannels.update)).toEqual([
        {
          type: "update",
          botId: running.bot.id,
          updateId: expect.any(Number),
          updateType: "message",
        },
      ]);
      expect(seen.get(botApiSimChannels["rate-limited"])).toEqual([
        {
          type: "rate-limited",
          botId: running.bot.id,
          chatId: chat.id,
          method: "sendMessage",
          retryAfter: 1,
          scope: "chat",
        },
      ]);
      expect(seen.get(botApiSimChannels.request)).toContainEqual({
        type: "request",
        botId: running.bot.id,
        method: "sendMessage",
        status: 429,
        durationMs: expect.any(Number),
      });
      expect(seen.get(botApiSimChannels.fault)).toEqual([
        { type: "fault", method: "getMe", fault: "reset" },
      ]);
      expect(Object.isFrozen(seen.get(botApiSimChannels.fault)?.[0])).toBe(true);
    } finally {
      for (const [name, listener] of listeners) unsubscribe(name, listener);
    }
  });
});

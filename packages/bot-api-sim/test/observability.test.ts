// Observability without leaks: the logger, diagnostics_channel messages, snapshots and error
// responses never contain a token, even when the token shows up in an internal error.

import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, botApiSimChannels, type Logger, start } from "../src/index.js";
import { call, raw } from "./helpers.js";

let sim: BotApiSim | undefined;
afterEach(() => sim?.close());

function recordingLogger(lines: string[]): Logger {
  const log = (level: string) => (obj: object, msg?: string) => {
    lines.push(`${level} ${msg ?? ""} ${JSON.stringify(obj)}`);
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
        { botId: running.bot.id, updateId: expect.any(Number), type: "message" },
      ]);
      expect(seen.get(botApiSimChannels.rateLimited)).toEqual([
        {
          botId: running.bot.id,
          chatId: chat.id,
          method: "sendMessage",
          retryAfter: 1,
          scope: "chat",
        },
      ]);
      expect(seen.get(botApiSimChannels.request)).toContainEqual({
        botId: running.bot.id,
        method: "sendMessage",
        status: 429,
        durationMs: expect.any(Number),
      });
      expect(seen.get(botApiSimChannels.fault)).toEqual([{ method: "getMe", fault: "reset" }]);
    } finally {
      for (const [name, listener] of listeners) unsubscribe(name, listener);
    }
  });
});

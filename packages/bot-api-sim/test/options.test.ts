// start() validates every option and names the bad one in the house wording.

import { describe, expect, it } from "vitest";
import { type BotApiSimOptions, defaultRateLimits, start } from "../src/index.js";
import { resolveOptions } from "../src/options.js";

const CUSTOM_TOKEN = "42:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw8";

describe("options", () => {
  it.each<[BotApiSimOptions, string]>([
    [{ port: -1 }, "Expected `port` to be an integer >= 0 and <= 65535, got -1"],
    [{ port: 1.5 }, "Expected `port` to be an integer >= 0 and <= 65535, got 1.5"],
    [
      { host: "0.0.0.0" },
      'Expected `host` to be a loopback address (127.0.0.1, ::1 or localhost) unless `allowNonLoopback` is true, got "0.0.0.0"',
    ],
    [{ timeScale: 0 }, "Expected `timeScale` to be a finite number > 0 and <= 10000, got 0"],
    [{ bots: [] }, "Expected `bots` to be a non-empty array, got []"],
    [{ bots: [{ username: "x" }] }, "Expected `bots[0].username` to be 5–32 characters"],
    [{ maxPendingUpdates: 0 }, "Expected `maxPendingUpdates` to be an integer >= 1, got 0"],
    [{ maxRequestBytes: 10 }, "Expected `maxRequestBytes` to be an integer >= 1024, got 10"],
    [{ maxFileStorageBytes: -1 }, "Expected `maxFileStorageBytes` to be an integer >= 0, got -1"],
    [{ updateRetentionMs: 0 }, "Expected `updateRetentionMs` to be a finite number > 0, got 0"],
    [
      { rateLimits: { perChatBurst: 0 } },
      "Expected `rateLimits.perChatBurst` to be an integer >= 1, got 0",
    ],
    [
      { rateLimits: { groupPerMinute: 2.5 } },
      "Expected `rateLimits.groupPerMinute` to be an integer >= 1, got 2.5",
    ],
    [
      { rateLimits: { globalPerSecond: -1 } },
      "Expected `rateLimits.globalPerSecond` to be a finite number > 0, got -1",
    ],
    [
      { rangeRequests: "yes" as unknown as boolean },
      'Expected `rangeRequests` to be a boolean, got "yes"',
    ],
    [
      { port: null as unknown as number },
      "Expected `port` to be an integer >= 0 and <= 65535, got null",
    ],
    [{ timeScale: null as unknown as number }, "got null"],
    [
      { headersTimeoutMs: 5 },
      "Expected `headersTimeoutMs` to be an integer >= 10 and <= 300000, got 5",
    ],
    [{ maxConnections: 0 }, "Expected `maxConnections` to be an integer >= 1, got 0"],
    [
      { rateLimits: { perChatBurst: null as unknown as number } },
      "Expected `rateLimits.perChatBurst` to be an integer >= 1, got null",
    ],
    [
      { clock: { now: () => 0 } as never },
      "Expected `clock` to be an object with `now`, `setTimer`, `sleep`",
    ],
    [
      { logger: { info: () => {} } as never },
      "Expected `logger` to be an object with `debug`, `info`, `warn`, `error`",
    ],
    [{ random: 4 as never }, "Expected `random` to be a function, got 4"],
  ])("rejects %j", (options, message) => {
    expect(() => resolveOptions(options)).toThrow(message);
  });

  it.each<[unknown, string]>([
    [{ timescale: 2 }, "Unknown option `timescale` in `options` (did you mean `timeScale`?)"],
    [
      { maxConection: 2 },
      "Unknown option `maxConection` in `options` (did you mean `maxConnections`?)",
    ],
    [
      { headerTimeoutMs: 2 },
      "Unknown option `headerTimeoutMs` in `options` (did you mean `headersTimeoutMs`?)",
    ],
    [
      { rateLimits: { perChatPerSec: 2 } },
      "Unknown option `perChatPerSec` in `rateLimits` (did you mean `perChatPerSecond`?)",
    ],
    [
      { bots: [{ usename: "some_bot" }] },
      "Unknown option `usename` in `bots[0]` (did you mean `username`?)",
    ],
    [{ zzz: 1 }, "Unknown option `zzz` in `options` (valid options: port, host,"],
    ["fast", 'Expected `options` to be an object, got "fast"'],
    [{ bots: [null] }, "Expected `bots[0]` to be an object, got null"],
  ])("names an unknown or malformed key: %j", (options, message) => {
    expect(() => resolveOptions(options as BotApiSimOptions)).toThrow(TypeError);
    expect(() => resolveOptions(options as BotApiSimOptions)).toThrow(message);
  });

  it("checks the option objects of the runtime setters whole", async () => {
    const sim = await start();
    try {
      expect(() => sim.setRateLimits({ groupPerMinut: 5 } as never)).toThrow(
        "Unknown option `groupPerMinut` in `limits` (did you mean `groupPerMinute`?)",
      );
      expect(() => sim.setRateLimits({ perChatBurst: null } as never)).toThrow(
        "Expected `limits.perChatBurst` to be an integer >= 1, got null",
      );
      expect(() => sim.faults.failNext("getMe", 1, { retry_after: 3 } as never)).toThrow(
        "Unknown option `retry_after` in `options` (did you mean `retryAfter`?)",
      );
      expect(() => sim.faults.resetNext("getMe", 1, { afterProcesing: true } as never)).toThrow(
        "did you mean `afterProcessing`?",
      );
      expect(() => sim.faults.setLatency(10, { jitter: 1 } as never)).toThrow(
        "did you mean `jitterMs`?",
      );
      expect(() => sim.faults.setErrorRate(0.1, { code: null } as never)).toThrow(
        "Expected `code` to be an integer >= 500 and <= 599, got null",
      );
      expect(() => sim.setRangeRequests("no" as never)).toThrow(
        'Expected `enabled` to be a boolean, got "no"',
      );
      const user = sim.users.create();
      expect(() => sim.users.create({ first_name: "A" } as never)).toThrow(
        "did you mean `firstName`?",
      );
      const chat = sim.chats.createPrivate(user);
      expect(() => sim.sendText(user, chat, "hi", { reply_to: 1 } as never)).toThrow(
        "Unknown option `reply_to` in `options` (did you mean `replyTo`?)",
      );
      expect(() => sim.chats.createGroup({ members: [user], titel: "x" } as never)).toThrow(
        "did you mean `title`?",
      );
      expect(() => sim.close({ timeout: 1 } as never)).toThrow("did you mean `timeoutMs`?");
      expect(sim.faults.pending()).toEqual({});
    } finally {
      await sim.close();
    }
  });

  it("rejects a malformed token without echoing it", async () => {
    await expect(start({ token: "secret-value-without-colon" })).rejects.toThrow(
      "Expected `bots[0].token` to be a bot token, <bot id>:<secret> as @BotFather issues it (digits, a colon, then 30 or more of A-Z a-z 0-9 _ -); got a string of length 26",
    );
    await expect(start({ token: "secret-value-without-colon" })).rejects.not.toThrow(
      "secret-value",
    );
  });

  it("rejects two bots with the same id or username", async () => {
    const secret = "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";
    await expect(
      start({ bots: [{ token: `5:${secret}a` }, { token: `5:${secret}b` }] }),
    ).rejects.toThrow("no other bot uses");
    await expect(
      start({ bots: [{ username: "same_name" }, { username: "same_name" }] }),
    ).rejects.toThrow("unique");
  });

  it("fills in defaults", () => {
    const resolved = resolveOptions();
    expect(resolved).toMatchObject({
      port: 0,
      host: "127.0.0.1",
      timeScale: 1,
      rangeRequests: true,
    });
    expect(resolved.rateLimits).toEqual(defaultRateLimits);
    expect(resolved.bots).toEqual([{}]);
    expect(resolveOptions({ rateLimits: { perChatBurst: 5 } }).rateLimits).toEqual({
      ...defaultRateLimits,
      perChatBurst: 5,
    });
  });

  it("reports a port that cannot be bound as ERR_LISTEN_FAILED", async () => {
    const first = await start();
    try {
      await expect(start({ port: first.port })).rejects.toMatchObject({
        code: "ERR_LISTEN_FAILED",
      });
    } finally {
      await first.close();
    }
  });

  it("uses a given token and bot details", async () => {
    const sim = await start({
      bots: [{ token: CUSTOM_TOKEN, username: "custom_bot", firstName: "Custom" }],
    });
    try {
      expect(sim.token).toBe(CUSTOM_TOKEN);
      expect(sim.bot).toMatchObject({ id: 42, username: "custom_bot", first_name: "Custom" });
    } finally {
      await sim.close();
    }
  });
});

// start() validates every option and names the bad one in the house wording.

import { describe, expect, it } from "vitest";
import { type BotApiSimOptions, defaultRateLimits, start } from "../src/index.js";
import { resolveOptions } from "../src/options.js";

describe("options", () => {
  it.each<[BotApiSimOptions, string]>([
    [{ port: -1 }, "Expected `port` to be an integer >= 0 and <= 65535, got -1"],
    [{ port: 1.5 }, "Expected `port` to be an integer >= 0 and <= 65535, got 1.5"],
    [
      { host: "0.0.0.0" },
      'Expected `host` to be a loopback address (127.0.0.1, ::1 or localhost), got "0.0.0.0"',
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
      "Expected `rangeRequests` to be a boolean, got yes",
    ],
  ])("rejects %j", (options, message) => {
    expect(() => resolveOptions(options)).toThrow(message);
  });

  it("rejects a malformed token without echoing it", async () => {
    await expect(start({ token: "secret-value-without-colon" })).rejects.toThrow(
      'Expected `bots[0].token` to look like "<bot id>:<secret>"',
    );
    await expect(start({ token: "secret-value-without-colon" })).rejects.not.toThrow(
      "secret-value",
    );
  });

  it("rejects two bots with the same id or username", async () => {
    await expect(start({ bots: [{ token: "5:a" }, { token: "5:b" }] })).rejects.toThrow(
      "no other bot uses",
    );
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
      bots: [{ token: "42:abc", username: "custom_bot", firstName: "Custom" }],
    });
    try {
      expect(sim.token).toBe("42:abc");
      expect(sim.bot).toMatchObject({ id: 42, username: "custom_bot", first_name: "Custom" });
    } finally {
      await sim.close();
    }
  });
});

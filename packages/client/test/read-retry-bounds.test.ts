import { ManualClock } from "@telepace/core";
import { retryAfterFrom } from "@telepace/outbox";
import { eventually } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import {
  clientDefaults,
  ReadRetryLimitError,
  RetryAfterError,
  TelegramClient,
} from "../src/index.js";
import { ok } from "./support/bot-server.js";
import { connect, TOKEN } from "./support/client.js";

const me = { id: 1, is_bot: true, first_name: "bot", username: "b" };

/** A server that answers `count` 429s with this `parameters` (raw JSON), then getMe's result. */
function rateLimitedThenOk(
  count: number,
  parameters: string,
  headers: Record<string, string> = {},
) {
  let calls = 0;
  return (_request: unknown, res: import("node:http").ServerResponse) => {
    if (calls++ >= count) return ok(res, me);
    res.writeHead(429, { "content-type": "application/json", ...headers });
    res.end(
      `{"ok":false,"error_code":429,"description":"Too Many Requests"${parameters === "" ? "" : `,"parameters":${parameters}`}}`,
    );
  };
}

describe("TelegramClient: reads stay bounded under 429s", { timeout: 20_000 }, () => {
  it("retry_after: 0 waits the documented minimum (1 s) instead of repeating at once", async () => {
    const clock = new ManualClock();
    const { server, client } = await connect(rateLimitedThenOk(1, `{"retry_after":0}`), {
      clock,
    });
    expect(clientDefaults.minReadRetryDelayMs).toBe(1_000);
    const read = client.getMe();
    await eventually("the retry sleeps on the clock", () =>
      expect(clock.nextTimerAt()).toBe(1_000),
    );
    await clock.advance(999);
    expect(server.requests).toHaveLength(1);
    await clock.advance(1);
    expect(await read).toMatchObject({ id: 1 });
    expect(server.requests).toHaveLength(2);
  });

  it.each([
    ["negative", 5_000, `{"retry_after":-3}`, {}],
    ["a string", 5_000, `{"retry_after":"3"}`, {}],
    ["null", 5_000, `{"retry_after":null}`, {}],
    ["missing", 5_000, `{}`, {}],
    ["no parameters at all", 5_000, "", {}],
    ["fractional (seconds, rounded up to whole ms)", 1_500, `{"retry_after":1.5}`, {}],
    ["invalid, with a Retry-After header", 2_000, `{"retry_after":-1}`, { "retry-after": "2" }],
  ])("a retry_after that is %s waits %i ms", async (_name, expectedMs, parameters, headers) => {
    const clock = new ManualClock();
    const { client } = await connect(rateLimitedThenOk(1, parameters, headers), { clock });
    const read = client.getMe();
    await eventually("the retry sleeps on the clock", () =>
      expect(clock.nextTimerAt()).toBe(expectedMs),
    );
    await clock.advance(expectedMs);
    expect(await read).toMatchObject({ id: 1 });
  });

  it("writes parse retry_after the same way: an invalid one freezes the chat for 5 s", async () => {
    const clock = new ManualClock();
    const { server, client } = await connect(rateLimitedThenOk(1, `{"retry_after":-3}`), {
      clock,
    });
    const sent = client.sendMessage(1, "x");
    await eventually("the outbox saw a 429", () =>
      expect(client.outbox.snapshot().counters.rateLimited).toBe(1),
    );
    await clock.advance(4_999);
    expect(server.requests).toHaveLength(1);
    await clock.advance(1);
    expect((await sent).status).toBe("delivered");
    // A foreign transport's 429 (retryAfterFrom) agrees too.
    expect(
      retryAfterFrom({ ok: false, error_code: 429, parameters: { retry_after: -3 } })?.retryAfterMs,
    ).toBe(5_000);
  });

  it("gives up with ReadRetryLimitError after maxReadRetries 429s", async () => {
    const clock = new ManualClock();
    const { server, client } = await connect(rateLimitedThenOk(100, `{"retry_after":0}`), {
      clock,
      maxReadRetries: 2,
    });
    const read = client.getMe().catch((error: unknown) => error);
    for (const at of [1_000, 2_000]) {
      await eventually("the retry sleeps on the clock", () => expect(clock.nextTimerAt()).toBe(at));
      await clock.advance(1_000);
    }
    const error = await read;
    expect(error).toBeInstanceOf(ReadRetryLimitError);
    expect(error).toMatchObject({
      code: "ERR_READ_RETRY_LIMIT",
      method: "getMe",
      limit: "maxReadRetries",
      retries: 2,
      waitedMs: 2_000,
      retryAfterMs: 0,
    });
    expect((error as Error).cause).toBeInstanceOf(RetryAfterError);
    expect(server.requests).toHaveLength(3);
    expect(clock.pendingTimers).toBe(0);
  });

  it("gives up when the next wait would pass maxReadRetryWaitMs, without sleeping it", async () => {
    const clock = new ManualClock();
    const { server, client } = await connect(rateLimitedThenOk(100, `{"retry_after":10}`), {
      clock,
      maxReadRetryWaitMs: 25_000,
    });
    const poll = client.getUpdates({ timeout: 0 }).catch((error: unknown) => error);
    for (const at of [10_000, 20_000]) {
      await eventually("the retry sleeps on the clock", () => expect(clock.nextTimerAt()).toBe(at));
      await clock.advance(10_000);
    }
    expect(await poll).toMatchObject({
      code: "ERR_READ_RETRY_LIMIT",
      method: "getUpdates",
      limit: "maxReadRetryWaitMs",
      retries: 2,
      waitedMs: 20_000,
      retryAfterMs: 10_000,
    });
    expect(server.requests).toHaveLength(3);
    expect(clock.now()).toBe(20_000);
  });

  it("maxReadRetries: 0 throws on the first 429; downloads and getFile are bounded too", async () => {
    const { server, client } = await connect(rateLimitedThenOk(100, `{"retry_after":1}`), {
      maxReadRetries: 0,
    });
    await expect(client.getFile("F")).rejects.toMatchObject({
      code: "ERR_READ_RETRY_LIMIT",
      method: "getFile",
      retries: 0,
    });
    await expect(client.downloadFile("a/b.bin")).rejects.toMatchObject({
      code: "ERR_READ_RETRY_LIMIT",
      method: "downloadFile",
    });
    expect(server.requests).toHaveLength(2);
  });

  it("the bounds are options with documented defaults, checked at construction", () => {
    expect(clientDefaults).toMatchObject({
      maxReadRetries: 5,
      maxReadRetryWaitMs: 300_000,
      minReadRetryDelayMs: 1_000,
    });
    expect(() => new TelegramClient({ token: TOKEN, maxReadRetries: -1 })).toThrow(
      new RangeError("Expected `maxReadRetries` to be an integer >= 0, got -1"),
    );
    expect(() => new TelegramClient({ token: TOKEN, maxReadRetries: 1.5 })).toThrow(RangeError);
    expect(() => new TelegramClient({ token: TOKEN, maxReadRetryWaitMs: null as never })).toThrow(
      new TypeError("Expected `maxReadRetryWaitMs` to be a finite number >= 0, got null"),
    );
    expect(
      () => new TelegramClient({ token: TOKEN, minReadRetryDelayMs: "1000" as never }),
    ).toThrow(TypeError);
  });
});

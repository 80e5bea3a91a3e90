import { describe, expect, it } from "vitest";
import { outboxDefaults, TelegramOutbox } from "../src/index.js";

describe("TelegramOutbox options", () => {
  it.each([
    [
      { privateChatRps: -1 },
      RangeError,
      "Expected `privateChatRps` to be a finite number >= 0, got -1",
    ],
    [
      { privateChatRps: Number.NaN },
      RangeError,
      "Expected `privateChatRps` to be a finite number >= 0, got NaN",
    ],
    [
      { groupChatRps: "3" },
      TypeError,
      'Expected `groupChatRps` to be a finite number >= 0, got "3"',
    ],
    [{ globalRps: 2.5 }, RangeError, "Expected `globalRps` to be an integer >= 0, got 2.5"],
    [{ groupBurst: 0 }, RangeError, "Expected `groupBurst` to be an integer >= 1, got 0"],
    [{ groupBurst: 1.5 }, RangeError, "Expected `groupBurst` to be an integer >= 1, got 1.5"],
    [{ sendReserve: -1 }, RangeError, "Expected `sendReserve` to be an integer >= 0, got -1"],
    [
      { pacingMarginMs: -1 },
      RangeError,
      "Expected `pacingMarginMs` to be a finite number >= 0, got -1",
    ],
    [{ maxInFlight: 0 }, RangeError, "Expected `maxInFlight` to be an integer >= 1, got 0"],
    [{ maxPending: 0 }, RangeError, "Expected `maxPending` to be an integer >= 1, got 0"],
    [
      { maxPendingPerChat: -3 },
      RangeError,
      "Expected `maxPendingPerChat` to be an integer >= 1, got -3",
    ],
    [
      { maxRetryAfterMs: -1 },
      RangeError,
      "Expected `maxRetryAfterMs` to be a finite number >= 0, got -1",
    ],
    [{ maxAttempts: 0 }, RangeError, "Expected `maxAttempts` to be an integer >= 1, got 0"],
    [
      { retryBaseDelayMs: Number.POSITIVE_INFINITY },
      RangeError,
      "Expected `retryBaseDelayMs` to be a finite number >= 0, got Infinity",
    ],
    [
      { retryMaxDelayMs: -5 },
      RangeError,
      "Expected `retryMaxDelayMs` to be a finite number >= 0, got -5",
    ],
    [
      { clock: 5 },
      TypeError,
      "Expected `clock` to be an object with `now`, `setTimer`, `sleep`, got 5",
    ],
    [
      { pacingStore: null },
      TypeError,
      "Expected `pacingStore` to be an object with `acquire`, `freeze`, got null",
    ],
    [
      { logger: { warn() {} } },
      TypeError,
      "Expected `logger` to be an object with `debug`, `info`, `warn`, `error`, got an object without `debug`, `info`, `error`",
    ],
    [{ classifyFailure: "x" }, TypeError, 'Expected `classifyFailure` to be a function, got "x"'],
  ])("rejects %o", (options, type, message) => {
    expect(() => new TelegramOutbox(options as never)).toThrow(new type(message));
  });

  it("accepts 0 rates (pacing off) and uses the documented defaults", () => {
    expect(
      () => new TelegramOutbox({ privateChatRps: 0, groupChatRps: 0, globalRps: 0 }),
    ).not.toThrow();
    expect(Object.isFrozen(outboxDefaults)).toBe(true);
    expect(outboxDefaults).toMatchObject({
      privateChatRps: 1,
      groupChatRps: 20 / 60,
      globalRps: 30,
      groupBurst: 20,
      sendReserve: 3,
      pacingMarginMs: 100,
      maxRetryAfterMs: 300_000,
    });
    expect(new TelegramOutbox().maxRetryAfterMs).toBe(300_000);
  });
});

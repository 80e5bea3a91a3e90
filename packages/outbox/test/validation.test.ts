import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import {
  MemoryPacingStore,
  outboxOptionNames,
  type PacingRequest,
  TelegramOutbox,
} from "../src/index.js";
import { setup } from "./support/setup.js";

describe("TelegramOutbox options, checked whole", () => {
  it.each([
    ["fast", 'Expected `options` to be an object, got "fast"'],
    [null, "Expected `options` to be an object, got null"],
    [5, "Expected `options` to be an object, got 5"],
    [[], "Expected `options` to be an object, got an array"],
  ])("rejects %o as the options", (options, message) => {
    expect(() => new TelegramOutbox(options as never)).toThrow(new TypeError(message));
  });

  it.each([
    ["maxConcurency", "maxInFlight"],
    ["privateChatRPS", "privateChatRps"],
    ["maxPendingPerchat", "maxPendingPerChat"],
    ["loger", "logger"],
    ["retryBaseDelay", "retryBaseDelayMs"],
    // Names from other libraries (and their typos) point at the option meant here.
    ["concurrency", "maxInFlight"],
    ["maxRetryAttempts", "maxAttempts"],
    ["maxDelaySeconds", "maxRetryAfterMs"],
  ])("rejects the unknown option %s, naming %s", (key, near) => {
    expect(() => new TelegramOutbox({ [key]: 1 } as never)).toThrow(
      new TypeError(`Unknown option \`${key}\` in \`options\` (did you mean \`${near}\`?)`),
    );
  });

  it("exports the names of its options, frozen, each one accepted by the constructor", () => {
    expect(Object.isFrozen(outboxOptionNames)).toBe(true);
    expect(outboxOptionNames).toContain("maxInFlight");
    expect(outboxOptionNames).toContain("clock");
    for (const name of outboxOptionNames) {
      expect(() => new TelegramOutbox({ [name]: undefined })).not.toThrow();
    }
    expect(() => new TelegramOutbox({ somethingElseEntirely: 1 } as never)).toThrow(
      `(valid options: ${outboxOptionNames.join(", ")})`,
    );
  });

  it("lists the valid options when no name is close", () => {
    expect(() => new TelegramOutbox({ somethingElseEntirely: 1 } as never)).toThrow(
      /^Unknown option `somethingElseEntirely` in `options` \(valid options: clock, privateChatRps, .*logger\)$/,
    );
  });

  it.each([
    ["privateChatRps", "a finite number >= 0"],
    ["groupChatRps", "a finite number >= 0"],
    ["groupBurst", "an integer >= 1"],
    ["sendReserve", "an integer >= 0"],
    ["globalRps", "an integer >= 0"],
    ["pacingMarginMs", "a finite number >= 0"],
    ["maxInFlight", "an integer >= 1"],
    ["maxPending", "an integer >= 1"],
    ["maxPendingPerChat", "an integer >= 1"],
    ["maxRetryAfterMs", "a finite number >= 0"],
    ["maxAttempts", "an integer >= 1"],
    ["retryBaseDelayMs", "a finite number >= 0"],
    ["retryMaxDelayMs", "a finite number >= 0"],
  ])("rejects null for %s instead of taking the default", (name, rule) => {
    expect(() => new TelegramOutbox({ [name]: null } as never)).toThrow(
      new TypeError(`Expected \`${name}\` to be ${rule}, got null`),
    );
  });

  it.each([
    [{ clock: null }, "Expected `clock` to be an object with `now`, `setTimer`, `sleep`, got null"],
    [
      { logger: null },
      "Expected `logger` to be an object with `debug`, `info`, `warn`, `error`, got null",
    ],
    [{ classifyFailure: null }, "Expected `classifyFailure` to be a function, got null"],
  ])("rejects %o", (options, message) => {
    expect(() => new TelegramOutbox(options as never)).toThrow(new TypeError(message));
  });

  it("takes undefined as the default, and every documented option", () => {
    expect(() => new TelegramOutbox(undefined)).not.toThrow();
    expect(() => new TelegramOutbox({ maxInFlight: undefined, logger: undefined })).not.toThrow();
    expect(
      () =>
        new TelegramOutbox({
          clock: new ManualClock(),
          privateChatRps: 1,
          groupChatRps: 1 / 3,
          groupBurst: 20,
          sendReserve: 3,
          globalRps: 30,
          pacingMarginMs: 100,
          maxInFlight: 32,
          maxPending: 10,
          maxPendingPerChat: 10,
          maxRetryAfterMs: 1000,
          maxAttempts: 3,
          retryBaseDelayMs: 10,
          retryMaxDelayMs: 100,
          pacingStore: { acquire: () => ({ granted: true }), freeze: () => {} },
          classifyFailure: () => ({ action: "fail", scope: "op", maybeDelivered: false }),
          logger: { debug() {}, info() {}, warn() {}, error() {} },
        }),
    ).not.toThrow();
  });
});

describe("per-call options throw from the call itself, before anything is queued", () => {
  const op = { chatId: 1, execute: async () => "ok" };

  it.each([
    ["fast", TypeError, 'Expected `options` to be an object, got "fast"'],
    [null, TypeError, "Expected `options` to be an object, got null"],
    [
      { signl: undefined },
      TypeError,
      "Unknown option `signl` in `options` (did you mean `signal`?)",
    ],
    [{ signal: "abort" }, TypeError, 'Expected `signal` to be an AbortSignal, got "abort"'],
    [{ signal: {} }, TypeError, "Expected `signal` to be an AbortSignal, got an object"],
  ])("enqueue(op, %o)", (options, type, message) => {
    const { outbox } = setup();
    expect(() => outbox.enqueue(op, options as never)).toThrow(new type(message));
    const snapshot = outbox.snapshot();
    expect(snapshot.pending).toBe(0);
    expect(snapshot.counters.enqueued).toBe(0);
  });

  it("checks the op before its options, and neither queues anything", () => {
    const { outbox } = setup();
    expect(() => outbox.enqueue({ chatId: 1 } as never, { signl: 1 } as never)).toThrow(
      new TypeError("Expected `op` to be an object with an `execute` function"),
    );
    expect(outbox.snapshot().pending).toBe(0);
  });

  it.each([
    ["soon", TypeError, 'Expected `options` to be an object, got "soon"'],
    [
      { timeout: 5 },
      TypeError,
      "Unknown option `timeout` in `options` (did you mean `timeoutMs`?)",
    ],
    [{ drain: null }, TypeError, "Expected `drain` to be a boolean, got null"],
    [{ timeoutMs: null }, TypeError, "Expected `timeoutMs` to be a finite number >= 0, got null"],
    [
      { timeoutMs: Number.NaN },
      RangeError,
      "Expected `timeoutMs` to be a finite number >= 0, got NaN",
    ],
  ])("close(%o)", (options, type, message) => {
    const { outbox } = setup();
    outbox.enqueue(op);
    expect(() => outbox.close(options as never)).toThrow(new type(message));
    expect(outbox.isClosed).toBe(false);
    expect(outbox.snapshot().pending).toBe(1);
  });

  it("close checks its options on a second call too, which otherwise returns the first promise", async () => {
    const { clock, outbox } = setup();
    const closing = outbox.close();
    expect(() => outbox.close({ drian: false } as never)).toThrow(
      new TypeError("Unknown option `drian` in `options` (did you mean `drain`?)"),
    );
    expect(outbox.close({ drain: false })).toBe(closing);
    await clock.flush();
    await closing;
  });

  it("dropPending checks its key", () => {
    const { outbox } = setup();
    expect(() => outbox.dropPending(1, 5 as never)).toThrow(
      new TypeError("Expected `key` to be a string, got 5"),
    );
    expect(outbox.dropPending(1, "edit:1")).toBe(false);
  });
});

describe("MemoryPacingStore checks its arguments the same way", () => {
  const request: PacingRequest = {
    chatKey: "1",
    intervalMs: 1_000,
    chatLimit: 0,
    chatWindowMs: 0,
    chatReserve: 0,
    paced: true,
    globalLimit: 30,
    globalWindowMs: 1_000,
    nowMs: 0,
  };

  it.each([
    [undefined, TypeError, "Expected `request` to be an object, got undefined"],
    [
      { ...request, chatkey: "1" },
      TypeError,
      "Unknown option `chatkey` in `request` (did you mean `chatKey`?)",
    ],
    [
      { ...request, chatKey: 1 },
      TypeError,
      "Expected `chatKey` to be a non-empty string or undefined, got 1",
    ],
    [
      { ...request, intervalMs: null },
      TypeError,
      "Expected `intervalMs` to be a finite number >= 0, got null",
    ],
    [
      { ...request, chatLimit: 1.5 },
      RangeError,
      "Expected `chatLimit` to be an integer >= 0, got 1.5",
    ],
    [
      { ...request, chatReserve: -1 },
      RangeError,
      "Expected `chatReserve` to be an integer >= 0, got -1",
    ],
    [
      { ...request, paced: undefined },
      TypeError,
      "Expected `paced` to be a boolean, got undefined",
    ],
    [
      { ...request, globalWindowMs: Number.NaN },
      RangeError,
      "Expected `globalWindowMs` to be a finite number >= 0, got NaN",
    ],
    [{ ...request, nowMs: "0" }, TypeError, 'Expected `nowMs` to be a finite number, got "0"'],
  ])("acquire(%o)", (bad, type, message) => {
    const store = new MemoryPacingStore();
    expect(() => store.acquire(bad as never)).toThrow(new type(message));
    // Nothing was recorded: the valid request is still granted.
    expect(store.acquire(request)).toEqual({ granted: true });
  });

  it.each([
    [["", 1_000, 0], TypeError, 'Expected `chatKey` to be a non-empty string or undefined, got ""'],
    [["1", -1, 0], RangeError, "Expected `durationMs` to be a finite number >= 0, got -1"],
    [["1", 1_000, Number.NaN], RangeError, "Expected `nowMs` to be a finite number, got NaN"],
  ])("freeze(%o)", (args, type, message) => {
    const store = new MemoryPacingStore();
    expect(() => store.freeze(...(args as [string, number, number]))).toThrow(new type(message));
    expect(store.trackedChats).toBe(0);
  });
});

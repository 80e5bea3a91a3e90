// Option validation: bad input gets a TypeError or RangeError naming the option and the value.

import { describe, expect, it } from "vitest";
import { UpdateDispatcher, type UpdateProcessor, updateDispatcherDefaults } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { recorder } from "./harness.js";

const noop: UpdateProcessor = () => {};

describe("constructor validation", () => {
  it.each([
    [
      { maxQueuedPerPrincipal: 0 },
      RangeError,
      "Expected `maxQueuedPerPrincipal` to be an integer >= 1, got 0",
    ],
    [
      { maxQueuedPerPrincipal: 1.5 },
      RangeError,
      "Expected `maxQueuedPerPrincipal` to be an integer >= 1, got 1.5",
    ],
    [
      { maxActivePrincipals: -1 },
      RangeError,
      "Expected `maxActivePrincipals` to be an integer >= 1, got -1",
    ],
    [{ maxConcurrency: 0 }, RangeError, "Expected `maxConcurrency` to be an integer >= 1, got 0"],
    [
      { maxConcurrency: "16" },
      TypeError,
      'Expected `maxConcurrency` to be an integer >= 1, got "16"',
    ],
    [
      { maxWaitingEnqueues: Number.NaN },
      RangeError,
      "Expected `maxWaitingEnqueues` to be an integer >= 1, got NaN",
    ],
    [
      { dedupeWindow: -1 },
      RangeError,
      "Expected `dedupeWindow` to be an integer >= 0 and <= 1048576, got -1",
    ],
    [
      { dedupeWindow: 1_048_577 },
      RangeError,
      "Expected `dedupeWindow` to be an integer >= 0 and <= 1048576, got 1048577",
    ],
    [
      { timeoutMs: 0 },
      RangeError,
      "Expected `timeoutMs` to be a finite number > 0 and <= 2147483647, got 0",
    ],
    [
      { timeoutMs: Number.POSITIVE_INFINITY },
      RangeError,
      "Expected `timeoutMs` to be a finite number > 0 and <= 2147483647, got Infinity",
    ],
    [
      { timeoutMs: 2 ** 31 },
      RangeError,
      "Expected `timeoutMs` to be a finite number > 0 and <= 2147483647, got 2147483648",
    ],
    [
      { closeTimeoutMs: -5 },
      RangeError,
      "Expected `closeTimeoutMs` to be an integer >= 0 and <= 2147483647, got -5",
    ],
    [
      { clock: {} },
      TypeError,
      "Expected `clock` to be an object with `now`, `setTimer`, `sleep`, got an object without `now`, `setTimer`, `sleep`",
    ],
    [
      { clock: null },
      TypeError,
      "Expected `clock` to be an object with `now`, `setTimer`, `sleep`, got null",
    ],
    [
      { logger: { info() {} } },
      TypeError,
      "Expected `logger` to be an object with `debug`, `info`, `warn`, `error`, got an object without `debug`, `warn`, `error`",
    ],
    [
      { maxConcurrency: null },
      TypeError,
      "Expected `maxConcurrency` to be an integer >= 1, got null",
    ],
    [
      { timeoutMs: null },
      TypeError,
      "Expected `timeoutMs` to be a finite number > 0 and <= 2147483647, got null",
    ],
    [
      { dedupeWindow: null },
      TypeError,
      "Expected `dedupeWindow` to be an integer >= 0 and <= 1048576, got null",
    ],
    [
      { maxConcurency: 4 },
      TypeError,
      "Unknown option `maxConcurency` in `options` (did you mean `maxConcurrency`?)",
    ],
    [
      { timeout: 1_000 },
      TypeError,
      "Unknown option `timeout` in `options` (did you mean `timeoutMs`?)",
    ],
  ])("rejects %o", (options, type, message) => {
    expect(() => new UpdateDispatcher(noop, options as never)).toThrow(type);
    expect(() => new UpdateDispatcher(noop, options as never)).toThrow(message);
  });

  it("rejects a processor that is not a function", () => {
    expect(() => new UpdateDispatcher(undefined as never)).toThrow(
      new TypeError("Expected `processor` to be a function, got undefined"),
    );
    expect(() => new UpdateDispatcher({} as never)).toThrow(
      new TypeError("Expected `processor` to be a function, got an object"),
    );
  });

  it("rejects options that are not an object", () => {
    expect(() => new UpdateDispatcher(noop, 5 as never)).toThrow(
      new TypeError("Expected `options` to be an object, got 5"),
    );
    expect(() => new UpdateDispatcher(noop, null as never)).toThrow(TypeError);
  });

  it("accepts undefined for every option and uses the frozen defaults", async () => {
    expect(updateDispatcherDefaults).toEqual({
      maxQueuedPerPrincipal: 32,
      maxActivePrincipals: 256,
      maxConcurrency: 16,
      maxWaitingEnqueues: 1024,
      dedupeWindow: 4096,
      closeTimeoutMs: 10_000,
    });
    expect(Object.isFrozen(updateDispatcherDefaults)).toBe(true);
    const dispatcher = new UpdateDispatcher(noop, {
      maxQueuedPerPrincipal: undefined,
      maxActivePrincipals: undefined,
      maxConcurrency: undefined,
      timeoutMs: undefined,
      clock: undefined,
      logger: undefined,
    });
    expect((await dispatcher.enqueue(privateMessage(1, 1))).status).toBe("accepted");
    await dispatcher.drain();
  });

  it("accepts a logger typed like pino's (overloaded log functions)", () => {
    // pino's LogFn, reproduced structurally: the option must accept a real pino logger.
    interface LogFn {
      <T extends object>(obj: T, msg?: string, ...args: unknown[]): void;
      (obj: unknown, msg?: string, ...args: unknown[]): void;
      (msg: string, ...args: unknown[]): void;
    }
    const log: LogFn = () => {};
    const pinoLike: { level: string; info: LogFn; debug: LogFn; warn: LogFn; error: LogFn } = {
      level: "info",
      info: log,
      debug: log,
      warn: log,
      error: log,
    };
    expect(() => new UpdateDispatcher(noop, { logger: pinoLike })).not.toThrow();
  });

  it("accepts a fractional timeoutMs", () => {
    expect(() => new UpdateDispatcher(noop, { timeoutMs: 0.5 })).not.toThrow();
  });
});

describe("per-call validation", () => {
  it("enqueue rejects malformed options synchronously and enqueues nothing", () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    expect(() => dispatcher.enqueue(privateMessage(1, 1), { wait: "yes" as never })).toThrow(
      new TypeError('Expected `wait` to be a boolean, got "yes"'),
    );
    expect(() => dispatcher.enqueue(privateMessage(1, 1), { signal: {} as never })).toThrow(
      new TypeError("Expected `signal` to be an AbortSignal, got an object"),
    );
    expect(() => dispatcher.enqueue(privateMessage(1, 1), 3 as never)).toThrow(TypeError);
    expect(() => dispatcher.enqueue(privateMessage(1, 1), { wiat: true } as never)).toThrow(
      new TypeError("Unknown option `wiat` in `options` (did you mean `wait`?)"),
    );
    expect(() => dispatcher.enqueue(privateMessage(1, 1), { signal: null } as never)).toThrow(
      new TypeError("Expected `signal` to be an AbortSignal, got null"),
    );
    expect(dispatcher.snapshot().accepted).toBe(0);
  });

  it("drain and close validate timeoutMs and signal", () => {
    const dispatcher = new UpdateDispatcher(noop);
    expect(() => dispatcher.drain({ timeoutMs: -1 })).toThrow(
      new RangeError("Expected `timeoutMs` to be an integer >= 0 and <= 2147483647, got -1"),
    );
    expect(() => dispatcher.close({ timeoutMs: 1.5 })).toThrow(RangeError);
    expect(() => dispatcher.close({ signal: "now" as never })).toThrow(TypeError);
    expect(() => dispatcher.drain({ timeoutMs: null } as never)).toThrow(
      new TypeError("Expected `timeoutMs` to be an integer >= 0 and <= 2147483647, got null"),
    );
    expect(() => dispatcher.drain({ timeout: 5 } as never)).toThrow(
      new TypeError("Unknown option `timeout` in `options` (did you mean `timeoutMs`?)"),
    );
    expect(() => dispatcher.close({ timeoutMS: 5 } as never)).toThrow(
      new TypeError("Unknown option `timeoutMS` in `options` (did you mean `timeoutMs`?)"),
    );
    expect(() => dispatcher.close(null as never)).toThrow(
      new TypeError("Expected `options` to be an object, got null"),
    );
    // A rejected close() call does not close.
    expect(dispatcher.isClosed).toBe(false);
  });
});

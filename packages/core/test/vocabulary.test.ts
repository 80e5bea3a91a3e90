import diagnosticsChannel from "node:diagnostics_channel";
import { describe, expect, it } from "vitest";
import {
  channelNames,
  checkBoolean,
  checkClock,
  checkFunction,
  checkLogger,
  checkMethods,
  checkObject,
  checkOptionalNumber,
  checkOptions,
  checkSignal,
  closestName,
  createPublisher,
  describeValue,
  ManualClock,
  safeLog,
  silentLogger,
  systemClock,
} from "../src/index.js";

describe("checkOptions", () => {
  const known = ["maxConcurrency", "maxQueuedPerPrincipal", "clock", "logger"];

  it("takes undefined as no options and returns a given object", () => {
    expect(checkOptions("options", undefined, known)).toEqual({});
    const given = { clock: systemClock };
    expect(checkOptions("options", given, known)).toBe(given);
  });

  it("rejects what is not a plain object", () => {
    for (const bad of ["fast", null, 5, [], () => {}]) {
      expect(() => checkOptions("options", bad, known)).toThrow(TypeError);
    }
    expect(() => checkOptions("options", "fast", known)).toThrow(
      'Expected `options` to be an object, got "fast"',
    );
    expect(() => checkOptions("outbox", null, known)).toThrow(
      "Expected `outbox` to be an object, got null",
    );
  });

  it("names an unknown key and the closest valid one", () => {
    expect(() => checkOptions("options", { maxConcurency: 4 }, known)).toThrow(
      new TypeError("Unknown option `maxConcurency` in `options` (did you mean `maxConcurrency`?)"),
    );
    expect(() => checkOptions("options", { zzzzzzzz: 1 }, known)).toThrow(
      "Unknown option `zzzzzzzz` in `options` (valid options: maxConcurrency, maxQueuedPerPrincipal, clock, logger)",
    );
  });

  it("finds plausible typos only", () => {
    expect(closestName("privateChatRPS", ["privateChatIntervalMs", "groupChatIntervalMs"])).toBe(
      undefined,
    );
    expect(closestName("maxBytesInflight", ["maxBytesInFlight", "maxQueuedAcquires"])).toBe(
      "maxBytesInFlight",
    );
    expect(closestName("downloads", ["download", "upload"])).toBe("download");
  });
});

describe("the other validators", () => {
  it("word every error the same way", () => {
    expect(() => checkObject("limits", [])).toThrow(
      "Expected `limits` to be an object, got an array",
    );
    expect(() => checkBoolean("wait", "yes", false)).toThrow(
      'Expected `wait` to be a boolean, got "yes"',
    );
    expect(checkBoolean("wait", undefined, true)).toBe(true);
    expect(() => checkFunction("processor", 3)).toThrow(
      "Expected `processor` to be a function, got 3",
    );
    expect(() => checkSignal("signal", {})).toThrow(
      "Expected `signal` to be an AbortSignal, got an object",
    );
    expect(checkSignal("signal", undefined)).toBeUndefined();
    expect(() => checkMethods("store", { take() {} }, ["take", "release"])).toThrow(
      "Expected `store` to be an object with `take`, `release`, got an object without `release`",
    );
    expect(() => checkClock({ now() {} }, systemClock)).toThrow(TypeError);
    const clock = new ManualClock();
    expect(checkClock(clock, systemClock)).toBe(clock);
    expect(checkClock(undefined, systemClock)).toBe(systemClock);
  });

  it("treats null for a number as an error, not as the default", () => {
    expect(checkOptionalNumber("n", undefined, 7, { min: 1 })).toBe(7);
    expect(() => checkOptionalNumber("n", null, 7, { min: 1 })).toThrow(
      "Expected `n` to be a finite number >= 1, got null",
    );
  });

  it("never formats an object or a long string into a message", () => {
    expect(describeValue({ token: "123:secret" })).toBe("an object");
    expect(describeValue("x".repeat(100))).toBe(`"${"x".repeat(40)}"…`);
  });
});

describe("loggers", () => {
  it("default to silence and check the four methods", () => {
    expect(checkLogger(undefined)).toBe(silentLogger);
    expect(() => checkLogger({ warn() {} })).toThrow(
      "Expected `logger` to be an object with `debug`, `info`, `warn`, `error`, got an object without `debug`, `info`, `error`",
    );
  });

  it("contain a logger that throws or returns a rejected promise", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const hostile = {
        debug: () => {
          throw new Error("sync");
        },
        info: async () => {
          throw new Error("async");
        },
        warn: () => ({
          // biome-ignore lint/suspicious/noThenProperty: a hostile thenable is the point of the test
          then() {
            throw new Error("thenable");
          },
        }),
        error: () => undefined,
      };
      for (const level of ["debug", "info", "warn", "error"] as const) {
        expect(() => safeLog(hostile, level, {}, "message")).not.toThrow();
      }
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});

describe("createPublisher", () => {
  type Event = { readonly type: "a"; readonly n: number } | { readonly type: "b" };
  const names = channelNames("core-test", ["a", "b"] as const);
  const publish = createPublisher<Event>(names);

  it("names channels telepace:<package>:<event>", () => {
    expect(names).toEqual({ a: "telepace:core-test:a", b: "telepace:core-test:b" });
  });

  it("builds nothing when nobody listens and publishes frozen events otherwise", () => {
    let built = 0;
    publish("a", () => {
      built++;
      return { type: "a", n: 1 };
    });
    expect(built).toBe(0);
    const seen: unknown[] = [];
    const listener = (event: unknown) => seen.push(event);
    diagnosticsChannel.subscribe(names.a, listener);
    try {
      publish("a", () => ({ type: "a", n: 2 }));
    } finally {
      diagnosticsChannel.unsubscribe(names.a, listener);
    }
    expect(seen).toEqual([{ type: "a", n: 2 }]);
    expect(Object.isFrozen(seen[0])).toBe(true);
  });
});

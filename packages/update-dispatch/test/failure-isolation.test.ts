// Failure isolation: every way a processor can fail is caught, logged with fixed safe metadata,
// and the key goes on with its next update.

import type { Update } from "@grammyjs/types";
import { spyLogger } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { UpdateDispatcher, type UpdateProcessor } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { settle } from "./harness.js";

const SECRET = "s3cr3t-payload-4f1c";

/** A processor whose update 1 fails with `failure`, recording every update it sees. */
function failingFirst(failure: (update: Update) => unknown) {
  const seen: number[] = [];
  const processor: UpdateProcessor = (update) => {
    seen.push(update.update_id);
    if (update.update_id === 1) return failure(update);
    return Promise.resolve();
  };
  return { seen, processor };
}

const failures: ReadonlyArray<[string, "warn" | "error", (update: Update) => unknown]> = [
  ["a rejected promise", "warn", () => Promise.reject(new Error(`boom ${SECRET}`))],
  [
    "an async function that throws",
    "warn",
    async () => {
      throw new TypeError(`bad ${SECRET}`);
    },
  ],
  [
    "a synchronous throw",
    "error",
    () => {
      throw new Error(`sync ${SECRET}`);
    },
  ],
  [
    "a synchronous throw of a non-Error value",
    "error",
    () => {
      throw SECRET;
    },
  ],
  ["a rejection with a non-Error value", "warn", () => Promise.reject({ detail: SECRET })],
  ["a rejection with undefined", "warn", () => Promise.reject(undefined)],
  [
    "a thenable whose `then` throws",
    "warn",
    () => ({
      // biome-ignore lint/suspicious/noThenProperty: a hostile thenable is the point of the test
      get then() {
        throw new Error(SECRET);
      },
    }),
  ],
  [
    "a native promise whose own `then` throws",
    "warn",
    () => {
      const promise = Promise.resolve();
      // biome-ignore lint/suspicious/noThenProperty: a hostile `then` is the point of the test
      Object.defineProperty(promise, "then", {
        value: () => {
          throw new Error(SECRET);
        },
      });
      return promise;
    },
  ],
  [
    "a rejected native promise whose own `then` throws",
    "warn",
    () => {
      const promise = Promise.reject(new Error(SECRET));
      // biome-ignore lint/suspicious/noThenProperty: a hostile `then` is the point of the test
      Object.defineProperty(promise, "then", {
        value: () => {
          throw new Error(SECRET);
        },
      });
      return promise;
    },
  ],
  [
    "a native promise whose `constructor` getter throws",
    "warn",
    () => {
      const promise = Promise.resolve();
      Object.defineProperty(promise, "constructor", {
        get() {
          throw new Error(SECRET);
        },
      });
      return promise;
    },
  ],
];

describe("failure isolation", () => {
  it.each(failures)("%s is caught and the key continues", async (_, level, failure) => {
    const logger = spyLogger();
    const { seen, processor } = failingFirst(failure);
    const dispatcher = new UpdateDispatcher(processor, { logger });
    await dispatcher.enqueue(privateMessage(1, 42, SECRET));
    await dispatcher.enqueue(privateMessage(2, 42, SECRET));
    await dispatcher.drain();

    expect(seen).toEqual([1, 2]);
    expect(dispatcher.snapshot()).toMatchObject({
      failed: 1,
      succeeded: 1,
      activePrincipals: 0,
      inFlight: 0,
    });
    expect(logger.calls).toHaveLength(1);
    expect(logger.calls[0]?.level).toBe(level);
    expect(logger.calls[0]?.fields).toEqual({ updateId: 1 });
  });

  it("logs contain neither the error nor the update content", async () => {
    const logger = spyLogger();
    const dispatcher = new UpdateDispatcher(
      (update) => {
        if (update.update_id % 2 === 0) throw new Error(`sync ${SECRET}`);
        return Promise.reject(new Error(`async ${SECRET}`, { cause: update }));
      },
      { logger, timeoutMs: 1000 },
    );
    for (let id = 1; id <= 6; id++) await dispatcher.enqueue(privateMessage(id, 42, SECRET));
    await dispatcher.drain();
    expect(logger.calls).toHaveLength(6);
    const logged = JSON.stringify(logger.calls);
    expect(logged).not.toContain(SECRET);
    expect(logged).not.toContain("hello");
    expect(logged).not.toContain("user 42");
    for (const call of logger.calls) {
      expect(Object.keys(call.fields)).toEqual(["updateId"]);
      expect(typeof call.message).toBe("string");
    }
    expect(new Set(logger.calls.map((call) => call.message)).size).toBe(2);
  });

  it("logs a malformed update_id as null, never its content", async () => {
    const logger = spyLogger();
    const dispatcher = new UpdateDispatcher(() => Promise.reject(new Error("x")), { logger });
    const update = { update_id: SECRET, message: { text: SECRET } } as unknown as Update;
    await dispatcher.enqueue(update);
    await dispatcher.drain();
    expect(logger.calls).toEqual([
      { level: "warn", fields: { updateId: null }, message: expect.any(String) },
    ]);
  });

  it("a failure in one key does not disturb another key running at the same time", async () => {
    const seen: number[] = [];
    const dispatcher = new UpdateDispatcher(async (update) => {
      seen.push(update.update_id);
      if (update.update_id === 1) throw new Error("boom");
    });
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.enqueue(privateMessage(2, 77));
    await dispatcher.enqueue(privateMessage(3, 42));
    await dispatcher.enqueue(privateMessage(4, 77));
    await dispatcher.drain();
    expect(seen.sort()).toEqual([1, 2, 3, 4]);
    expect(dispatcher.snapshot()).toMatchObject({ failed: 1, succeeded: 3 });
  });

  it("a processor that returns a plain value (not a promise) succeeds", async () => {
    const dispatcher = new UpdateDispatcher(() => 42);
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.drain();
    expect(dispatcher.snapshot().succeeded).toBe(1);
  });

  it("a logger that throws does not break dispatch", async () => {
    const broken = spyLogger({
      answer: () => {
        throw new Error("logger down");
      },
    });
    const seen: number[] = [];
    const dispatcher = new UpdateDispatcher(
      (update) => {
        seen.push(update.update_id);
        throw new Error("boom");
      },
      { logger: broken, maxQueuedPerPrincipal: 1 },
    );
    // Offered in one synchronous burst, so the third finds the queue full and is rejected.
    const results = await Promise.all(
      [1, 2, 3].map((id) => dispatcher.enqueue(privateMessage(id, 42))),
    );
    expect(results.map((result) => result.status)).toEqual(["accepted", "accepted", "rejected"]);
    await dispatcher.drain();
    expect(seen).toEqual([1, 2]);
  });

  it("a logger whose methods return rejected promises is contained too", async () => {
    const logger = spyLogger({ answer: () => Promise.reject(new Error("transport down")) });
    const dispatcher = new UpdateDispatcher(
      () => {
        throw new Error("boom");
      },
      { logger, maxQueuedPerPrincipal: 1 },
    );
    const results = await Promise.all(
      [1, 2, 3].map((id) => dispatcher.enqueue(privateMessage(id, 42))),
    );
    expect(results.map((result) => result.status)).toEqual(["accepted", "accepted", "rejected"]);
    await dispatcher.drain();
    await settle();
    // An unhandled rejection would fail this run; the counters show every call was logged.
    expect(dispatcher.snapshot()).toMatchObject({ failed: 2 });
  });

  it("the processor is called without the dispatcher as `this`", async () => {
    let receiver: unknown = "unset";
    const dispatcher = new UpdateDispatcher(function (this: unknown) {
      receiver = this;
    });
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.drain();
    expect(receiver).toBeUndefined();
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RetryAfterError } from "../src/index.js";
import { fail } from "./support/ops.js";
import { setup } from "./support/setup.js";

// Unhandled rejections are reported on `process` after the microtask queue drains, so each test
// waits for one turn of the event loop before it looks.
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled.length = 0;
  process.on("unhandledRejection", onUnhandled);
});
afterEach(() => {
  process.off("unhandledRejection", onUnhandled);
});
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A logger whose every method answers like a failing async transport, and counts its calls. */
function brokenLogger(answer: () => unknown) {
  const calls: string[] = [];
  const method = (level: string) => () => {
    calls.push(level);
    return answer();
  };
  const logger = {
    debug: method("debug"),
    info: method("info"),
    warn: method("warn"),
    error: method("error"),
  };
  return { logger, calls };
}

describe("a logger that fails", () => {
  it.each([
    ["returns a rejected promise", () => Promise.reject(new Error("transport down"))],
    [
      "throws",
      () => {
        throw new Error("transport down");
      },
    ],
    [
      "returns a thenable whose then throws",
      () => ({
        // biome-ignore lint/suspicious/noThenProperty: a hostile thenable is the point of the test.
        then() {
          throw new Error("transport down");
        },
      }),
    ],
  ])("%s: contained, and the outbox keeps working", async (_, answer) => {
    const { logger, calls } = brokenLogger(answer);
    const { clock, outbox, rec } = setup({ logger, maxPending: 2, maxAttempts: 2 });
    const limited = outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("a", [fail(new RetryAfterError(100)), "ok"]),
    });
    const failing = outbox.enqueue({
      chatId: 2,
      execute: rec.scripted("b", [fail(new Error("x"))]),
    });
    const rejected = outbox.enqueue({ chatId: 3, execute: rec.scripted("c") });
    await clock.advance(100);
    expect(await limited).toMatchObject({ status: "delivered", result: "ok", attempts: 2 });
    expect(await failing).toMatchObject({ status: "failed", attempts: 1 });
    expect((await rejected).status).toBe("rejected");
    // The outbox still schedules after every log call failed.
    const later = outbox.enqueue({ chatId: 4, execute: rec.scripted("d") });
    await clock.flush();
    expect(await later).toMatchObject({ status: "delivered", result: "d" });
    const closing = outbox.close();
    await clock.flush();
    await closing;
    await nextTurn();
    expect(calls).toEqual(expect.arrayContaining(["warn", "debug"]));
    expect(unhandled).toEqual([]);
  });

  it("a pacing store that fails is logged through the same containment", async () => {
    const { logger, calls } = brokenLogger(() => Promise.reject(new Error("transport down")));
    let broken = true;
    const { clock, outbox, rec } = setup({
      logger,
      retryBaseDelayMs: 50,
      pacingStore: {
        acquire: () => {
          if (broken) throw new Error("store down");
          return { granted: true };
        },
        freeze: () => Promise.reject(new Error("store down")),
      },
    });
    const outcome = outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("a", [fail(new RetryAfterError(10)), "ok"]),
    });
    await clock.flush();
    broken = false;
    await clock.advance(50);
    await clock.advance(10);
    expect(await outcome).toMatchObject({ status: "delivered", attempts: 2 });
    await nextTurn();
    expect(calls.filter((level) => level === "error")).toHaveLength(2);
    expect(unhandled).toEqual([]);
  });
});

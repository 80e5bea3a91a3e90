import { spyLogger, unhandledRejectionsOf } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { RetryAfterError } from "../src/index.js";
import { fail } from "./support/ops.js";
import { setup } from "./support/setup.js";

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
    const logger = spyLogger({ answer });
    const rejections = await unhandledRejectionsOf(async () => {
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
    });
    const levels = logger.calls.map((call) => call.level);
    expect(levels).toEqual(expect.arrayContaining(["warn", "debug"]));
    expect(rejections).toEqual([]);
  });

  it("a pacing store that fails is logged through the same containment", async () => {
    const logger = spyLogger({ answer: () => Promise.reject(new Error("transport down")) });
    const rejections = await unhandledRejectionsOf(async () => {
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
    });
    expect(logger.calls.filter((call) => call.level === "error")).toHaveLength(2);
    expect(rejections).toEqual([]);
  });
});

import { ManualClock } from "@telepace/core";
import { eventually, spyLogger, unhandledRejectionsOf } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { apiError, message, ok } from "./support/bot-server.js";
import { connect } from "./support/client.js";

describe("TelegramClient: every log call is contained", { timeout: 20_000 }, () => {
  it.each([
    ["returns a rejected promise", (message: string) => Promise.reject(new Error(message))],
    [
      "throws",
      (message: string) => {
        throw new Error(message);
      },
    ],
  ])("a logger that %s breaks neither reads nor writes", async (_name, fail) => {
    const rejections = await unhandledRejectionsOf(async () => {
      const clock = new ManualClock();
      const logger = spyLogger({ answer: (call) => fail(call.message) });
      const limited = new Set<string>();
      const { client } = await connect(
        (request, res) => {
          // The first call of each method is rate limited.
          if (!limited.has(request.method) && limited.add(request.method))
            return apiError(res, 429, "Too Many Requests", { retry_after: 1 });
          return ok(res, request.method === "getMe" ? { id: 1 } : message(1, 1, "x"));
        },
        { clock, logger },
      );
      // A read's 429 is logged by the client, a write's by its outbox.
      const read = client.getMe();
      await eventually("the retry sleeps on the clock", () =>
        expect(clock.nextTimerAt()).toBe(1_000),
      );
      await clock.advance(1_000);
      expect(await read).toMatchObject({ id: 1 });
      const sent = client.sendMessage(1, "x");
      await eventually("the outbox saw a 429", () =>
        expect(client.outbox.snapshot().counters.rateLimited).toBe(1),
      );
      await clock.advance(1_000);
      expect((await sent).status).toBe("delivered");
      expect(logger.calls).toContainEqual(
        expect.objectContaining({ level: "warn", message: "rate limited (429): sleeping" }),
      );
      expect(logger.calls.some((call) => call.level === "debug")).toBe(true);
    });
    expect(rejections).toEqual([]);
  });
});

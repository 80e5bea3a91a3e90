import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { apiError, message, ok } from "./support/bot-server.js";
import { connect, eventually } from "./support/client.js";
import { unhandledRejectionsOf } from "./support/rejections.js";

type Level = "debug" | "info" | "warn" | "error";
const levels: readonly Level[] = ["debug", "info", "warn", "error"];

/** A logger whose every method fails the given way, recording what it was asked to log. */
function failingLogger(fail: (message: string) => unknown) {
  const calls: string[] = [];
  const logger = Object.fromEntries(
    levels.map((level) => [
      level,
      (_fields: unknown, message: string) => {
        calls.push(`${level}: ${message}`);
        return fail(message);
      },
    ]),
  ) as unknown as Record<Level, (fields: Record<string, unknown>, message: string) => unknown>;
  return { logger, calls };
}

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
      const { logger, calls } = failingLogger(fail);
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
      await eventually(() => expect(clock.nextTimerAt()).toBe(1_000));
      await clock.advance(1_000);
      expect(await read).toMatchObject({ id: 1 });
      const sent = client.sendMessage(1, "x");
      await eventually(() => expect(client.outbox.snapshot().counters.rateLimited).toBe(1));
      await clock.advance(1_000);
      expect((await sent).status).toBe("delivered");
      expect(calls).toContain("warn: rate limited (429): sleeping");
      expect(calls.some((line) => line.startsWith("debug: "))).toBe(true);
    });
    expect(rejections).toEqual([]);
  });
});

// getUpdates failures, read through the duck-typed contract: 429s slept out on the clock (with a
// floor and a cap), 409/401/404 stop polling with a typed error, anything else backs off.

import { ManualClock } from "@telepace/core";
import { spyLogger } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { MemoryUpdateJournal, PollingStoppedError, UpdateIntake } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { apiError, FakeTelegram, until } from "./intake-harness.js";

function setUp(options: { maxRetryAfterMs?: number } = {}) {
  const clock = new ManualClock();
  const telegram = new FakeTelegram(clock);
  const logger = spyLogger();
  const intake = new UpdateIntake(() => {}, {
    getUpdates: telegram.getUpdates,
    clock,
    logger,
    ...options,
  });
  return { clock, telegram, logger, intake };
}

/** Advances the clock and reports how many getUpdates calls had been made by then. */
async function callsAfter(clock: ManualClock, telegram: FakeTelegram, ms: number): Promise<number> {
  await clock.advance(ms);
  await until(() => true);
  return telegram.calls.length;
}

describe("UpdateIntake getUpdates failures", () => {
  it.each([
    ["grammY / envelope: parameters.retry_after", apiError(429, 3), 3_000],
    [
      "telepace RetryAfterError: retryAfterMs",
      { code: "ERR_RETRY_AFTER", retryAfterMs: 1_500 },
      1_500,
    ],
    ["a 429 without retry_after", apiError(429), 5_000],
    ["retry_after 0 (the floor)", apiError(429, 0), 1_000],
    ["retry_after of an hour (the cap)", apiError(429, 3_600), 60_000],
  ])("sleeps out a 429 on the clock: %s", async (_name, error, waitMs) => {
    const { clock, telegram, intake } = setUp();
    telegram.failures.push(error);
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => intake.snapshot().state === "backing-off");
    expect(await callsAfter(clock, telegram, waitMs - 1)).toBe(1);
    expect(await callsAfter(clock, telegram, 1)).toBe(2);
    expect(intake.snapshot()).toMatchObject({ rateLimited: 1, backoffs: 1, state: "polling" });
    stop.abort();
    await running;
  });

  it("caps a 429 at maxRetryAfterMs", async () => {
    const { clock, telegram, intake } = setUp({ maxRetryAfterMs: 2_000 });
    telegram.failures.push(apiError(429, 30));
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => intake.snapshot().state === "backing-off");
    expect(await callsAfter(clock, telegram, 2_000)).toBe(2);
    stop.abort();
    await running;
  });

  it.each([
    ["grammY GrammyError 409", apiError(409), "ERR_POLLING_CONFLICT", 409],
    ["telepace TelegramApiError 401", { errorCode: 401 }, "ERR_POLLING_UNAUTHORIZED", 401],
    ["a 404 (a malformed token)", apiError(404), "ERR_POLLING_UNAUTHORIZED", 404],
  ])("stops with a PollingStoppedError: %s", async (_name, error, code, errorCode) => {
    const { telegram, intake, logger } = setUp();
    telegram.failures.push(error);
    const failure = await intake.run().catch((caught: unknown) => caught);
    expect(failure).toBeInstanceOf(PollingStoppedError);
    expect(failure).toMatchObject({ code, errorCode, cause: error });
    expect(intake.snapshot().state).toBe("stopped");
    expect(logger.calls.at(-1)).toMatchObject({ level: "error", fields: { errorCode } });
    // Webhook-style intake still works, and run() may be tried again.
    expect(await intake.accept(privateMessage(1, 1))).toEqual({ status: "stored" });
    await intake.close();
  });

  it("backs off transient failures from 0.5 s doubling to 30 s, reset by a good poll", async () => {
    const { clock, telegram, intake, logger } = setUp();
    const secret = "123456:SECRET-TOKEN";
    const networkError = () =>
      Object.assign(new Error(`connect ECONNREFUSED https://api.telegram.org/bot${secret}/x`), {
        code: "ECONNREFUSED",
      });
    for (let index = 0; index < 8; index++) telegram.failures.push(networkError());
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => intake.snapshot().state === "backing-off");
    for (const [index, delayMs] of [
      500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000,
    ].entries()) {
      expect(await callsAfter(clock, telegram, delayMs - 1)).toBe(index + 1);
      expect(await callsAfter(clock, telegram, 1)).toBe(index + 2);
    }
    // The ninth call is a long poll now; it returns an update, and the next call fails: the
    // backoff starts at 0.5 s again.
    telegram.failures.push(networkError());
    telegram.push(privateMessage(1, 1));
    await until(() => telegram.calls.length === 10 && intake.snapshot().state === "backing-off");
    expect(intake.snapshot().appended).toBe(1);
    expect(await callsAfter(clock, telegram, 499)).toBe(10);
    expect(await callsAfter(clock, telegram, 1)).toBe(11);
    expect(intake.snapshot().backoffs).toBe(9);
    expect(logger.calls.filter((call) => call.level === "warn")[0]).toMatchObject({
      fields: { reason: "transient", code: "ECONNREFUSED", delayMs: 500 },
    });
    expect(JSON.stringify(logger.calls)).not.toContain("SECRET");
    stop.abort();
    await running;
    await intake.close();
  });

  it("stops promptly when the signal aborts during a backoff or a long poll", async () => {
    const { telegram, intake, clock } = setUp();
    telegram.failures.push(new Error("boom"));
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => intake.snapshot().state === "backing-off");
    stop.abort();
    await running;
    expect(intake.snapshot().state).toBe("idle");
    expect(clock.pendingTimers).toBe(0);
    const again = new AbortController();
    const second = intake.run({ signal: again.signal });
    await until(() => telegram.calls.length === 2); // a long poll, waiting on the clock
    await expect(intake.run()).rejects.toMatchObject({ code: "ERR_INTAKE_RUNNING" });
    again.abort();
    await second;
    expect(clock.pendingTimers).toBe(0);
    await intake.close();
  });

  it("offers a batch the journal could not store again after a backoff, without confirming or fetching it again", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const journal = new MemoryUpdateJournal();
    let failAppends = 1;
    const append = journal.append.bind(journal);
    journal.append = (updates) =>
      failAppends-- > 0
        ? Promise.reject(Object.assign(new Error("disk full"), { code: "ENOSPC" }))
        : append(updates);
    const processed: number[] = [];
    const intake = new UpdateIntake((update) => void processed.push(update.update_id), {
      getUpdates: telegram.getUpdates,
      clock,
      journal,
    });
    telegram.push(privateMessage(1, 1));
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => intake.snapshot().state === "backing-off");
    expect(processed).toEqual([]);
    expect(telegram.pending).toBe(1); // not confirmed while the journal failed
    await clock.advance(500);
    await until(() => processed.length === 1);
    await until(() => telegram.calls.length === 2);
    expect(telegram.calls.map((call) => call.offset)).toEqual([undefined, 2]);
    expect(telegram.deliveries.get(1)).toBe(1);
    stop.abort();
    await running;
    await intake.close();
  });
});

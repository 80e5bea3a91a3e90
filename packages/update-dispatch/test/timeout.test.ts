// The optional per-update timeout: the abort reaches the processor, the key and the slot are
// freed, and a late result is ignored and logged safely. Driven by a ManualClock.

import type { Update } from "@grammyjs/types";
import { createDeferred, ManualClock } from "@telepace/core";
import { spyLogger } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { UpdateDispatchError, UpdateDispatcher } from "../src/index.js";
import { privateMessage } from "./fixtures.js";

describe("per-update timeout", () => {
  it("aborts the processor's signal with ERR_UPDATE_TIMEOUT and frees the key", async () => {
    const clock = new ManualClock();
    const logger = spyLogger();
    const seen: number[] = [];
    const signals: AbortSignal[] = [];
    const dispatcher = new UpdateDispatcher(
      (update, signal) => {
        seen.push(update.update_id);
        signals.push(signal);
        // Update 1 hangs and ignores its signal; the dispatcher must move on anyway.
        return update.update_id === 1 ? new Promise(() => {}) : undefined;
      },
      { clock, timeoutMs: 1_000, logger },
    );
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.enqueue(privateMessage(2, 42));
    await clock.advance(999);
    expect(seen).toEqual([1]);
    expect(signals[0]?.aborted).toBe(false);

    await clock.advance(1);
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[0]?.reason).toBeInstanceOf(UpdateDispatchError);
    expect(signals[0]?.reason).toMatchObject({ code: "ERR_UPDATE_TIMEOUT" });
    await dispatcher.drain();
    expect(seen).toEqual([1, 2]);
    expect(dispatcher.snapshot()).toMatchObject({
      timedOut: 1,
      succeeded: 1,
      abandoned: 1,
      inFlight: 0,
      activePrincipals: 0,
    });
    expect(dispatcher.watermark).toBe(2);
    expect(logger.calls).toEqual([
      { level: "warn", fields: { updateId: 1 }, message: expect.stringContaining("timed out") },
    ]);
  });

  it("frees the processor slot, so 16 hung processors cannot stop the dispatcher", async () => {
    const clock = new ManualClock();
    const seen: number[] = [];
    const dispatcher = new UpdateDispatcher(
      (update) => {
        seen.push(update.update_id);
        return update.update_id <= 2 ? new Promise(() => {}) : undefined;
      },
      { clock, timeoutMs: 500, maxConcurrency: 2 },
    );
    for (const id of [1, 2, 3]) await dispatcher.enqueue(privateMessage(id, id));
    await clock.flush();
    expect(seen).toEqual([1, 2]);
    await clock.advance(500);
    expect(seen).toEqual([1, 2, 3]);
    expect(dispatcher.snapshot().timedOut).toBe(2);
  });

  it("ignores a result that arrives after the timeout and logs it at debug, safely", async () => {
    const clock = new ManualClock();
    const logger = spyLogger();
    const late = createDeferred<void>();
    const dispatcher = new UpdateDispatcher(() => late.promise, {
      clock,
      timeoutMs: 100,
      logger,
    });
    await dispatcher.enqueue(privateMessage(1, 42, "secret text"));
    await clock.advance(100);
    expect(dispatcher.snapshot()).toMatchObject({ timedOut: 1, abandoned: 1 });
    late.reject(new Error("secret text"));
    await clock.flush();
    expect(dispatcher.snapshot()).toMatchObject({
      timedOut: 1,
      failed: 0,
      succeeded: 0,
      abandoned: 0,
    });
    expect(logger.calls.map((call) => [call.level, call.fields])).toEqual([
      ["warn", { updateId: 1 }],
      ["debug", { updateId: 1 }],
    ]);
    expect(JSON.stringify(logger.calls)).not.toContain("secret");
  });

  it("a processor that honours its signal ends as timed out, not failed", async () => {
    const clock = new ManualClock();
    const reasons: unknown[] = [];
    const dispatcher = new UpdateDispatcher(
      async (_update: Update, signal) => {
        try {
          await clock.sleep(10_000, { signal });
        } catch (error) {
          reasons.push(error);
          throw error;
        }
      },
      { clock, timeoutMs: 250 },
    );
    await dispatcher.enqueue(privateMessage(1, 42));
    await clock.advance(250);
    expect(reasons).toEqual([expect.objectContaining({ code: "ERR_UPDATE_TIMEOUT" })]);
    expect(dispatcher.snapshot()).toMatchObject({ timedOut: 1, failed: 0, abandoned: 0 });
    expect(clock.pendingTimers).toBe(0);
  });

  it("cancels the timer of an update that finishes in time", async () => {
    const clock = new ManualClock();
    const dispatcher = new UpdateDispatcher(() => clock.sleep(10), { clock, timeoutMs: 1_000 });
    await dispatcher.enqueue(privateMessage(1, 42));
    await clock.advance(10);
    await dispatcher.drain();
    expect(clock.pendingTimers).toBe(0);
    expect(dispatcher.snapshot()).toMatchObject({ succeeded: 1, timedOut: 0 });
  });

  it("gives each update its own signal when a timeout is set", async () => {
    const clock = new ManualClock();
    const signals: AbortSignal[] = [];
    const dispatcher = new UpdateDispatcher(
      (update, signal) => {
        signals.push(signal);
        return update.update_id === 1 ? new Promise(() => {}) : undefined;
      },
      { clock, timeoutMs: 100 },
    );
    await dispatcher.enqueue(privateMessage(1, 1));
    await dispatcher.enqueue(privateMessage(2, 2));
    await clock.advance(100);
    expect(signals.map((signal) => signal.aborted)).toEqual([true, false]);
  });

  it("without timeoutMs a slow update is never aborted (as in the seed)", async () => {
    const clock = new ManualClock();
    const signals: AbortSignal[] = [];
    const dispatcher = new UpdateDispatcher(
      (_update, signal) => {
        signals.push(signal);
        return clock.sleep(3_600_000);
      },
      { clock },
    );
    await dispatcher.enqueue(privateMessage(1, 42));
    await clock.advance(3_599_999);
    expect(signals[0]?.aborted).toBe(false);
    expect(dispatcher.snapshot().inFlight).toBe(1);
    await clock.advance(1);
    await dispatcher.drain();
    expect(dispatcher.snapshot().succeeded).toBe(1);
  });
});

import type { Update } from "@grammyjs/types";
import { createDeferred, ManualClock } from "@telepace/core";
import { type GetUpdates, MemoryUpdateJournal, UpdateIntake } from "@telepace/update-dispatch";
import { describe, expect, it } from "vitest";
import { instrumentTelepace } from "../src/index.js";
import { meterHarness } from "./support/metric-reader.js";
import { message } from "./support/updates.js";

type Step = { readonly delayMs?: number; readonly updates?: Update[]; readonly error?: unknown };

/** getUpdates answering from a script, one step per call; past the script it long-polls forever. */
function scripted(clock: ManualClock, steps: readonly Step[]): GetUpdates {
  let call = 0;
  return async (_params, { signal }) => {
    const step = steps[call++];
    if (step === undefined) {
      await new Promise((_, reject) =>
        signal.addEventListener("abort", () => reject(signal.reason)),
      );
      return [];
    }
    if (step.delayMs !== undefined) await clock.sleep(step.delayMs, { signal });
    if (step.error !== undefined) throw step.error;
    return step.updates ?? [];
  };
}

describe("intake metrics", () => {
  it("reports offset lag, unfinished updates, polling counters and poll durations", async () => {
    const clock = new ManualClock();
    const { meter, collect } = meterHarness();
    const slow = createDeferred<void>();
    const intake = new UpdateIntake(
      async (update) => {
        if (update.update_id === 1) await slow.promise;
      },
      {
        clock,
        getUpdates: scripted(clock, [
          { delayMs: 1_500, updates: [message(1, 10), message(2, 11), message(3, 12)] },
          { error: { error_code: 429, parameters: { retry_after: 3 } } },
          { delayMs: 500, updates: [message(4, 13), message(5, 14), message(5, 14)] },
        ]),
      },
    );
    const metrics = instrumentTelepace({ meter, intake });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await clock.advance(1_500);
    await clock.advance(3_000);
    await clock.advance(500);
    await clock.flush();

    let collected = await collect();
    expect(intake.snapshot().confirmedOffset).toBe(6);
    expect(collected.value("telepace.intake.offset.lag")).toBe(5);
    expect(collected.value("telepace.intake.unfinished")).toBe(1);
    expect(collected.value("telepace.intake.polls")).toBe(4);
    expect(collected.value("telepace.intake.updates.fetched")).toBe(6);
    expect(collected.value("telepace.intake.updates.stored")).toBe(5);
    expect(collected.value("telepace.intake.updates.duplicates")).toBe(1);
    expect(collected.value("telepace.intake.rate_limited")).toBe(1);
    expect(collected.value("telepace.intake.backoffs")).toBe(1);
    expect(collected.histogram("telepace.intake.poll.duration")).toMatchObject({
      count: 2,
      sum: 2,
      max: 1.5,
    });
    // The intake's own dispatcher, read through its snapshot.
    expect(collected.value("telepace.dispatch.in_flight", { "telepace.key.kind": "private" })).toBe(
      1,
    );
    expect(collected.value("telepace.dispatch.active_principals")).toBe(1);

    slow.resolve();
    await clock.flush();
    collected = await collect();
    expect(collected.value("telepace.intake.offset.lag")).toBe(0);
    expect(collected.value("telepace.intake.unfinished")).toBe(0);
    expect(
      collected.value("telepace.dispatch.updates", {
        "telepace.key.kind": "private",
        "telepace.outcome": "succeeded",
      }),
    ).toBe(5);

    metrics.stop();
    stop.abort();
    await running;
    await intake.close();
  });
});

describe("intake journal metrics", () => {
  it("reports failed journal calls, an outage while it lasts, and restarts of update ids", async () => {
    const clock = new ManualClock();
    const { meter, collect } = meterHarness();
    const journal = new MemoryUpdateJournal();
    const append = journal.append.bind(journal);
    let failing = 2;
    journal.append = (updates) =>
      failing-- > 0
        ? Promise.reject(Object.assign(new Error("full"), { code: "ENOSPC" }))
        : append(updates);
    const intake = new UpdateIntake(() => {}, { clock, journal });
    const metrics = instrumentTelepace({ meter, intake });
    await expect(intake.accept(message(1, 10))).rejects.toThrow("full");
    await clock.advance(2_500);
    await expect(intake.accept(message(1, 10))).rejects.toThrow("full");
    let collected = await collect();
    expect(collected.value("telepace.intake.journal.failures")).toBe(2);
    expect(collected.value("telepace.intake.journal.outage")).toBe(2.5);
    expect(collected.value("telepace.intake.id_restarts")).toBe(0);

    expect(await intake.accept(message(1, 10))).toEqual({ status: "stored" });
    await clock.flush();
    await clock.advance(7 * 24 * 3_600_000); // a silent week: the next id starts a new numbering
    expect(await intake.accept(message(1, 10))).toEqual({ status: "stored" });
    collected = await collect();
    expect(collected.value("telepace.intake.journal.outage")).toBe(0);
    expect(collected.value("telepace.intake.id_restarts")).toBe(1);
    metrics.stop();
    await intake.close();
  });
});

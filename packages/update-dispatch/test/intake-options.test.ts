// UpdateIntake's options are checked whole at construction, and its snapshot and diagnostics
// channels report what it does with safe metadata only.

import { ManualClock } from "@telepace/core";
import { recordChannels } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import {
  MemoryUpdateJournal,
  UpdateIntake,
  type UpdateIntakeEvent,
  updateIntakeChannels,
  updateIntakeDefaults,
} from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { FakeTelegram, until } from "./intake-harness.js";

const processor = () => {};

describe("UpdateIntake options", () => {
  it("has documented, frozen defaults", () => {
    expect(updateIntakeDefaults).toEqual({
      journalFailure: "retry",
      maxConcurrency: 256,
      maxUnfinished: 1000,
      maxJournalUpdates: 100_000,
      pollLimit: 100,
      pollTimeoutSeconds: 30,
      maxRetryAfterMs: 60_000,
      closeTimeoutMs: 10_000,
    });
    expect(Object.isFrozen(updateIntakeDefaults)).toBe(true);
  });

  it.each([
    [
      { maxUnfinshed: 5 },
      "Unknown option `maxUnfinshed` in `options` (did you mean `maxUnfinished`?)",
    ],
    [{ maxUnfinished: 0 }, "Expected `maxUnfinished` to be an integer >= 1, got 0"],
    [{ maxJournalUpdates: 0.5 }, "Expected `maxJournalUpdates` to be an integer >= 1, got 0.5"],
    [{ maxJournalUpdates: null }, "Expected `maxJournalUpdates` to be an integer >= 1, got null"],
    [{ pollLimit: 101 }, "Expected `pollLimit` to be an integer >= 1 and <= 100, got 101"],
    [
      { pollTimeoutSeconds: 51 },
      "Expected `pollTimeoutSeconds` to be an integer >= 0 and <= 50, got 51",
    ],
    [
      { maxRetryAfterMs: 10 },
      "Expected `maxRetryAfterMs` to be an integer >= 1000 and <= 2147483647, got 10",
    ],
    [
      { closeTimeoutMs: -1 },
      "Expected `closeTimeoutMs` to be an integer >= 0 and <= 2147483647, got -1",
    ],
    [{ getUpdates: 5 }, "Expected `getUpdates` to be a function, got 5"],
    [{ journal: {} }, "Expected `journal` to be an object with"],
    [
      { allowedUpdates: "message" },
      "Expected `allowedUpdates` to be an array of update type names",
    ],
    [
      { dispatcher: { clock: new ManualClock() } },
      "Unknown option `clock` in `dispatcher` (set `clock` on the intake instead)",
    ],
    [
      { dispatcher: { maxConcurrency: 0 } },
      "Expected `maxConcurrency` to be an integer >= 1, got 0",
    ],
    [
      { dispatcher: { maxConcurency: 2 } },
      "Unknown option `maxConcurency` in `dispatcher` (did you mean `maxConcurrency`?)",
    ],
    [
      { dispatcher: { dedupeWindow: 10 } },
      "Unknown option `dedupeWindow` in `dispatcher` (the intake's journal decides what is a duplicate",
    ],
    [
      { journalFailure: "ignore" },
      'Expected `journalFailure` to be "retry" or "reject", got "ignore"',
    ],
    [
      // A journal written before restartIds() existed.
      { journal: Object.assign(new MemoryUpdateJournal(), { restartIds: undefined }) },
      "got an object without `restartIds`",
    ],
    [{ logger: { info() {} } }, "Expected `logger` to be an object with"],
    [{ clock: {} }, "Expected `clock` to be an object with"],
    [[], "Expected `options` to be an object, got an array"],
  ])("rejects %j", (options, message) => {
    expect(() => new UpdateIntake(processor, options as never)).toThrow(message);
  });

  it("rejects a processor that is not a function, and run() without getUpdates", async () => {
    expect(() => new UpdateIntake(5 as never)).toThrow(TypeError);
    const intake = new UpdateIntake(processor);
    expect(() => intake.run()).toThrow("run() needs the `getUpdates` option");
    expect(() => intake.run({ signl: undefined } as never)).toThrow("did you mean `signal`?");
    expect(() => intake.close({ timeoutMs: -1 })).toThrow(RangeError);
    await intake.close();
  });
});

describe("UpdateIntake snapshot and diagnostics", () => {
  it("publishes intake events and returns frozen snapshots", async () => {
    expect(Object.values(updateIntakeChannels)).toContain("telepace:update-dispatch:intake-polled");
    using recorder = recordChannels<UpdateIntakeEvent>(updateIntakeChannels);
    const { events } = recorder;
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    telegram.push(privateMessage(1, 1), privateMessage(2, 2));
    const intake = new UpdateIntake(() => new Promise(() => {}), {
      getUpdates: telegram.getUpdates,
      clock,
      maxJournalUpdates: 2,
    });
    telegram.failures.push({ error_code: 502 });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => intake.snapshot().state === "backing-off");
    await clock.advance(500);
    await until(() => intake.snapshot().state === "paused");
    stop.abort();
    await running;
    await intake.close({ timeoutMs: 0 });
    expect(events.map((event) => event.type)).toEqual([
      "intake-backoff",
      "intake-polled",
      "intake-stored",
      "intake-paused",
      "intake-stopped",
    ]);
    expect(events[0]).toEqual({
      type: "intake-backoff",
      reason: "transient",
      delayMs: 500,
      errorCode: 502,
    });
    expect(events[2]).toEqual({
      type: "intake-stored",
      source: "poll",
      appended: 2,
      duplicates: 0,
    });
    expect(events.every((event) => Object.isFrozen(event))).toBe(true);
    const snapshot = intake.snapshot();
    expect(Object.isFrozen(snapshot)).toBe(true);
    expect(snapshot).toMatchObject({
      state: "closed",
      polls: 3, // the failure, the batch, and the confirmation at close
      fetched: 2,
      appended: 2,
      unfinished: 2,
      inMemory: 2,
      backlog: 0,
      readBack: 0,
      backoffs: 1,
      pauses: 1,
      confirmedOffset: 3,
      journal: { kind: "memory", isDurable: false },
    });
    expect(snapshot.dispatcher.interrupted).toBe(2);
  });
});

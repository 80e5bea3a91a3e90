// A journal that fails for a while (a full disk): the intake keeps the fetched batch unconfirmed
// and tries the journal again with backoff, retries the finishes it failed, reports the outage in
// its snapshot and events, and stops only when asked to fail fast.

import type { Update } from "@grammyjs/types";
import { ManualClock } from "@telepace/core";
import { recordChannels, spyLogger } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import {
  MemoryUpdateJournal,
  UpdateIntake,
  type UpdateIntakeEvent,
  updateIntakeChannels,
} from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { FakeTelegram, until } from "./intake-harness.js";

const diskFull = (): Error =>
  Object.assign(new Error("/var/bot: no space left"), { code: "ENOSPC" });

/** A memory journal whose appends and finishes fail while `failing` says so. */
function flakyJournal() {
  const journal = new MemoryUpdateJournal();
  const state = { appendsToFail: 0, finishesToFail: 0 };
  const append = journal.append.bind(journal);
  const finish = journal.finish.bind(journal);
  journal.append = (updates: readonly Update[]) =>
    state.appendsToFail-- > 0 ? Promise.reject(diskFull()) : append(updates);
  journal.finish = (updateId: number) =>
    state.finishesToFail-- > 0 ? Promise.reject(diskFull()) : finish(updateId);
  return { journal, state };
}

describe("a journal outage", () => {
  it("tries the held batch again at 0.5, 1 and 2 s, fetching nothing meanwhile, and reports the outage", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const { journal, state } = flakyJournal();
    const logger = spyLogger();
    using events = recordChannels<UpdateIntakeEvent>(updateIntakeChannels);
    const processed: number[] = [];
    const intake = new UpdateIntake((update) => void processed.push(update.update_id), {
      getUpdates: telegram.getUpdates,
      clock,
      journal,
      logger,
    });
    state.appendsToFail = 3;
    telegram.push(privateMessage(1, 1), privateMessage(2, 2));
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => intake.snapshot().journalFailures === 1);
    expect(intake.snapshot()).toMatchObject({ state: "backing-off", journalOutageMs: 0 });
    await clock.advance(500);
    await until(() => intake.snapshot().journalFailures === 2);
    await clock.advance(1_000);
    await until(() => intake.snapshot().journalFailures === 3);
    expect(intake.snapshot().journalOutageMs).toBe(1_500);
    expect(telegram.calls).toHaveLength(1);
    expect(telegram.pending).toBe(2);
    expect(processed).toEqual([]);
    await clock.advance(2_000);
    await until(() => processed.length === 2);
    expect(intake.snapshot()).toMatchObject({
      journalFailures: 3,
      journalOutageMs: 0,
      backoffs: 3,
    });
    expect(
      events.events
        .filter((e) => e.type === "intake-backoff")
        .map((e) => e.type === "intake-backoff" && [e.reason, e.delayMs]),
    ).toEqual([
      ["journal", 500],
      ["journal", 1_000],
      ["journal", 2_000],
    ]);
    expect(events.events.filter((e) => e.type.startsWith("intake-journal"))).toEqual([
      { type: "intake-journal-failed", code: "ENOSPC" },
      { type: "intake-journal-recovered", outageMs: 3_500, failures: 3 },
    ]);
    expect(logger.text()).not.toContain("no space left");
    await until(() => telegram.pending === 0);
    stop.abort();
    await running;
    await intake.close();
  });

  it("retries a finish the journal failed, holding its room until it is marked", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const { journal, state } = flakyJournal();
    const processed: number[] = [];
    const intake = new UpdateIntake((update) => void processed.push(update.update_id), {
      getUpdates: telegram.getUpdates,
      clock,
      journal,
      maxUnfinished: 1,
    });
    state.finishesToFail = 2;
    telegram.push(privateMessage(1, 1), privateMessage(2, 2));
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => processed.length === 1 && intake.snapshot().journalFailures === 1);
    expect(intake.snapshot()).toMatchObject({ state: "paused", unfinished: 1, finished: 0 });
    await clock.advance(500);
    await until(() => intake.snapshot().journalFailures === 2);
    expect(processed).toEqual([1]); // still paused: update 1 holds the only room
    await clock.advance(1_000);
    await until(() => processed.length === 2);
    await until(() => intake.snapshot().unfinished === 0);
    expect(await journal.unfinished()).toEqual([]);
    expect(intake.snapshot()).toMatchObject({ finished: 2, journalOutageMs: 0 });
    stop.abort();
    await running;
    await intake.close();
  });

  it("with journalFailure: reject, run() rejects with a coded error and the batch stays unconfirmed", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const { journal, state } = flakyJournal();
    using events = recordChannels<UpdateIntakeEvent>(updateIntakeChannels);
    const intake = new UpdateIntake(() => {}, {
      getUpdates: telegram.getUpdates,
      clock,
      journal,
      journalFailure: "reject",
    });
    state.appendsToFail = 1;
    telegram.push(privateMessage(1, 1));
    const error = await intake.run().catch((reason: unknown) => reason);
    expect(error).toMatchObject({
      name: "UpdateDispatchError",
      code: "ERR_POLLING_JOURNAL_FAILED",
      cause: { code: "ENOSPC" },
    });
    expect(intake.snapshot()).toMatchObject({ state: "stopped", journalFailures: 1 });
    expect(events.events.at(-1)).toEqual({ type: "intake-stopped", reason: "journal" });
    expect(telegram.pending).toBe(1);
    await intake.close();
  });

  it("a webhook update rejects with the journal's error during an outage, and counts it", async () => {
    const { journal, state } = flakyJournal();
    const intake = new UpdateIntake(() => {}, { clock: new ManualClock(), journal });
    state.appendsToFail = 1;
    await expect(intake.accept(privateMessage(1, 1))).rejects.toMatchObject({ code: "ENOSPC" });
    expect(intake.snapshot().journalFailures).toBe(1);
    expect(await intake.accept(privateMessage(1, 1))).toEqual({ status: "stored" });
    expect(intake.snapshot().journalOutageMs).toBe(0);
    await intake.close();
  });
});

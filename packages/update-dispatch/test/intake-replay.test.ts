// Restart and shutdown: close() leaves unfinished updates in the journal, the next intake on that
// journal replays them first in per-principal order, and every processing outcome but an
// interruption marks the update finished.

import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { MemoryUpdateJournal, UpdateIntake, type UpdateProcessor } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { recorder } from "./harness.js";
import { FakeTelegram, until } from "./intake-harness.js";

const ids = async (journal: MemoryUpdateJournal) =>
  (await journal.unfinished()).map((update) => update.update_id);

describe("UpdateIntake restart", () => {
  it("leaves unfinished updates in the journal; the next intake replays them in order", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const journal = new MemoryUpdateJournal();
    const first = recorder();
    first.gate(1);
    first.gate(2);
    // User 10: 1, 3, 5; user 20: 2, 4, 6.
    for (let id = 1; id <= 6; id++) telegram.push(privateMessage(id, id % 2 === 1 ? 10 : 20));
    const before = new UpdateIntake(first.processor, {
      getUpdates: telegram.getUpdates,
      clock,
      journal,
    });
    const stopped = before.run();
    await until(() => first.started.length === 2);
    const closed = await before.close({ timeoutMs: 0 });
    await stopped;
    expect(closed).toEqual({ status: "timed-out", unfinished: 6 });
    expect(before.snapshot().state).toBe("closed");
    expect(await ids(journal)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(telegram.pending).toBe(0); // confirmed although unfinished

    const second = recorder();
    telegram.push(privateMessage(7, 10), privateMessage(8, 30));
    const after = new UpdateIntake(second.processor, {
      getUpdates: telegram.getUpdates,
      clock,
      journal,
    });
    const running = after.run();
    await until(() => second.finished.length === 8);
    expect(telegram.calls.at(-2)?.offset).toBe(7);
    expect(second.started.filter((id) => [1, 3, 5, 7].includes(id))).toEqual([1, 3, 5, 7]);
    expect(second.started.filter((id) => [2, 4, 6].includes(id))).toEqual([2, 4, 6]);
    expect(second.started.slice(0, 2)).toEqual([1, 2]); // replayed before anything new
    expect(after.snapshot()).toMatchObject({ replayed: 6, appended: 2, finished: 8 });
    await until(() => journal.snapshot().unfinished === 0);
    await after.close();
    await running;
    expect(await journal.unfinished()).toEqual([]); // a journal passed in is not closed
  });

  it("a hand-over answered `closed` and updates never handed over stay in the journal", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const journal = new MemoryUpdateJournal();
    const rec = recorder();
    rec.gate(1);
    for (let id = 1; id <= 5; id++) telegram.push(privateMessage(id, id));
    const intake = new UpdateIntake(rec.processor, {
      getUpdates: telegram.getUpdates,
      clock,
      journal,
      dispatcher: {
        maxActivePrincipals: 1,
        maxQueuedPerPrincipal: 1,
        maxConcurrency: 1,
        maxWaitingEnqueues: 1,
      },
    });
    const running = intake.run();
    await until(() => rec.started.length === 1 && intake.snapshot().dispatcher.waiting === 1);
    const result = await intake.close({ timeoutMs: 0 });
    await running;
    expect(result).toEqual({ status: "timed-out", unfinished: 5 });
    expect(intake.snapshot().dispatcher.rejected.closed).toBe(1);
    expect(await ids(journal)).toEqual([1, 2, 3, 4, 5]);

    const next = recorder();
    const again = new UpdateIntake(next.processor, { clock, journal });
    expect(await again.accept(privateMessage(6, 6))).toEqual({ status: "stored" });
    await until(() => next.finished.length === 6);
    expect(next.started).toEqual([1, 2, 3, 4, 5, 6]);
    await again.close();
  });

  it("marks succeeded, failed, thrown and timed-out updates finished", async () => {
    const clock = new ManualClock();
    const journal = new MemoryUpdateJournal();
    const processor: UpdateProcessor = (update) => {
      switch (update.update_id) {
        case 1:
          return Promise.resolve();
        case 2:
          return Promise.reject(new Error("failed"));
        case 3:
          throw new Error("threw");
        default:
          return new Promise(() => {}); // hangs, ignoring its signal
      }
    };
    const intake = new UpdateIntake(processor, {
      clock,
      journal,
      dispatcher: { timeoutMs: 1_000 },
    });
    for (let id = 1; id <= 4; id++) await intake.accept(privateMessage(id, id));
    await until(() => intake.snapshot().finished === 3);
    expect(await ids(journal)).toEqual([4]);
    await clock.advance(1_000);
    await until(() => intake.snapshot().finished === 4);
    expect(await ids(journal)).toEqual([]);
    expect(intake.snapshot().dispatcher).toMatchObject({ succeeded: 1, failed: 2, timedOut: 1 });
    expect(await intake.close({ timeoutMs: 0 })).toEqual({ status: "drained", unfinished: 0 });
  });

  it("lets stored updates finish during the grace period; an interrupted one stays", async () => {
    const clock = new ManualClock();
    const journal = new MemoryUpdateJournal();
    const rec = recorder();
    const quick = rec.gate(1);
    rec.gate(2);
    await journal.append([privateMessage(1, 1), privateMessage(2, 2)]);
    const intake = new UpdateIntake(rec.processor, { clock, journal });
    await intake.accept(privateMessage(3, 3));
    await until(() => rec.started.length === 3);
    const closing = intake.close({ timeoutMs: 5_000 });
    quick.resolve();
    await clock.advance(5_000);
    expect(await closing).toEqual({ status: "timed-out", unfinished: 1 });
    expect(await ids(journal)).toEqual([2]);
    expect(rec.signals.get(2)?.aborted).toBe(true);
  });

  it("confirms stored updates at close when no poll has confirmed them", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const rec = recorder();
    rec.gate(1);
    rec.gate(2);
    for (let id = 1; id <= 3; id++) telegram.push(privateMessage(id, id));
    const intake = new UpdateIntake(rec.processor, {
      getUpdates: telegram.getUpdates,
      clock,
      maxJournalUpdates: 2,
    });
    const running = intake.run();
    await until(() => intake.snapshot().state === "paused");
    expect(telegram.calls).toHaveLength(1);
    const closing = intake.close({ timeoutMs: 0 });
    await running;
    await closing;
    expect(telegram.calls.at(-1)).toEqual({ offset: 3, limit: 1, timeout: 0 });
    expect(telegram.pending).toBe(1); // update 3 was never stored, so it is not confirmed
    // The intake created its journal, so it closed it.
    await expect(intake.journal.unfinished()).rejects.toMatchObject({
      code: "ERR_JOURNAL_CLOSED",
    });
  });

  it("rejects run() when the journal cannot be read, and reads it again at the next run()", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const journal = new MemoryUpdateJournal();
    await journal.append([privateMessage(1, 1)]);
    const unfinishedIds = journal.unfinishedIds.bind(journal);
    let failures = 1;
    journal.unfinishedIds = () =>
      failures-- > 0 ? Promise.reject(new Error("cannot read")) : unfinishedIds();
    const rec = recorder();
    const intake = new UpdateIntake(rec.processor, {
      getUpdates: telegram.getUpdates,
      clock,
      journal,
    });
    await expect(intake.run()).rejects.toThrow("cannot read");
    expect(intake.snapshot().state).toBe("idle");
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => rec.finished.length === 1);
    expect(telegram.calls[0]?.offset).toBe(2);
    stop.abort();
    await running;
    await intake.close();
  });

  it("refuses to run or accept after close", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const intake = new UpdateIntake(() => {}, { getUpdates: telegram.getUpdates, clock });
    await intake[Symbol.asyncDispose]();
    await expect(intake.run()).rejects.toMatchObject({ code: "ERR_INTAKE_CLOSED" });
    expect(await intake.accept(privateMessage(1, 1))).toEqual({ status: "closed" });
    expect(intake.close()).toBe(intake.close());
  });
});

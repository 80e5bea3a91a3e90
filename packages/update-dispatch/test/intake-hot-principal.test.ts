// One principal sending far faster than it is served, for as long as it likes: its updates beyond
// its queue wait in the journal, polling never pauses for it, everybody else is served at once,
// and its backlog comes back in order; a restart replays a large journal a page at a time.

import type { Update } from "@grammyjs/types";
import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { MemoryUpdateJournal, UpdateIntake } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { recorder } from "./harness.js";
import { FakeTelegram, until } from "./intake-harness.js";

const HOT = 7;

/** `count` updates from id `first`: every fourth from one of 50 other users, the rest from HOT. */
function burst(first: number, count: number): Update[] {
  return Array.from({ length: count }, (_, index) => {
    const id = first + index;
    return privateMessage(id, id % 4 === 0 ? 100 + (id % 50) : HOT);
  });
}

const isHot = (update: Update): boolean => update.message?.from?.id === HOT;

describe("UpdateIntake with a hot principal", () => {
  it("keeps polling and serving everybody else while one principal's backlog waits in the journal", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const rec = recorder();
    const held = rec.gate(1); // the hot principal's first update hangs until released
    const updates = burst(1, 4_000); // 3,000 from HOT: three times maxUnfinished
    telegram.push(...updates);
    const intake = new UpdateIntake(rec.processor, { getUpdates: telegram.getUpdates, clock });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    const others = updates.filter((update) => !isHot(update)).map((update) => update.update_id);
    await until(() => rec.finished.length === others.length, 20_000);
    // Everybody else was served; the hot principal holds its queue (1 running, 32 waiting).
    expect(rec.finished).toEqual(others);
    expect(telegram.pending).toBe(0);
    const snapshot = intake.snapshot();
    expect(snapshot).toMatchObject({ pauses: 0, unfinished: 3_000, inMemory: 33, backlog: 2_967 });
    expect(snapshot.dispatcher.queued).toBe(32);

    held.resolve();
    await until(() => rec.finished.length === updates.length, 20_000);
    const hot = rec.started.filter((id) => !others.includes(id));
    expect(hot).toEqual(updates.filter(isHot).map((update) => update.update_id));
    expect(intake.snapshot()).toMatchObject({ unfinished: 0, inMemory: 0, readBack: 2_967 });
    stop.abort();
    await running;
    await intake.close();
  });

  it.each([
    ["the memory journal", false, 10_000],
    ["a durable journal", true, 10_100],
  ])("bounds the backlog with %s by maxJournalUpdates' default", async (_, isDurable, stored) => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const rec = recorder();
    const held = rec.gate(1);
    const journal = new MemoryUpdateJournal();
    const snapshot = journal.snapshot.bind(journal);
    journal.snapshot = () => ({ ...snapshot(), isDurable });
    telegram.push(...Array.from({ length: 10_100 }, (_, index) => privateMessage(index + 1, HOT)));
    const intake = new UpdateIntake(rec.processor, {
      getUpdates: telegram.getUpdates,
      clock,
      journal,
    });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => intake.snapshot().fetched === stored, 20_000);
    // Paused at the bound, or polling on (the next call confirms the last batch and waits).
    await until(
      () => (isDurable ? telegram.calls.length > 101 : intake.snapshot().state === "paused"),
      20_000,
    );
    // The backlog is one principal's: 33 in memory, the rest in the journal only.
    expect(intake.snapshot()).toMatchObject({
      unfinished: stored,
      inMemory: 33,
      backlog: stored - 33,
      pauses: isDurable ? 0 : 1,
    });
    // Paused: the last batch is stored and confirmed by the next poll, 100 were never fetched.
    expect(telegram.pending).toBe(isDurable ? 0 : 200);
    held.resolve();
    await until(() => rec.finished.length === 10_100, 20_000);
    expect(rec.started).toEqual(Array.from({ length: 10_100 }, (_, index) => index + 1));
    stop.abort();
    await running;
    await intake.close();
  });

  it("replays a large journal a page at a time, in order, within maxUnfinished", async () => {
    const journal = new MemoryUpdateJournal();
    const updates = burst(1, 3_000);
    await journal.append(updates);
    const reads: number[] = [];
    const read = journal.read.bind(journal);
    journal.read = (ids) => {
      reads.push(ids.length);
      return read(ids);
    };
    journal.unfinished = () => Promise.reject(new Error("the intake reads pages, not everything"));
    const clock = new ManualClock();
    const rec = recorder();
    const intake = new UpdateIntake(rec.processor, { clock, journal, maxUnfinished: 100 });
    let peak = 0;
    const sample = setInterval(() => {
      peak = Math.max(peak, intake.snapshot().inMemory);
    }, 0);
    await intake.accept(privateMessage(3_001, HOT));
    await until(() => rec.finished.length === 3_001, 20_000);
    clearInterval(sample);
    expect(Math.max(...reads)).toBeLessThanOrEqual(256);
    expect(peak).toBeLessThanOrEqual(100);
    for (const user of [HOT, 100, 102, 148]) {
      const ids = rec.started.filter(
        (id) => (id === 3_001 ? HOT : (updates[id - 1]?.message?.from?.id as number)) === user,
      );
      expect(ids.length).toBeGreaterThan(0);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    }
    expect(intake.snapshot()).toMatchObject({ replayed: 3_000, unfinished: 0 });
    await intake.close();
  });
});

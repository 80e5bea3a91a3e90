// Long polling through the intake: processing never holds intake back, the offset confirms what is
// stored, each update is fetched about once, and duplicates are not dispatched again.

import type { Update } from "@grammyjs/types";
import { createDeferred, ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { MemoryUpdateJournal, UpdateIntake, type UpdateProcessor } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { recorder } from "./harness.js";
import { FakeTelegram, until } from "./intake-harness.js";

describe("UpdateIntake long polling", () => {
  it("one hung update does not stall the others; each update is fetched once", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const processed: number[] = [];
    const hung = createDeferred<void>();
    const processor: UpdateProcessor = async (update) => {
      if (update.update_id === 1) await hung.promise;
      processed.push(update.update_id);
    };
    // Update 1 for user 1; 999 others for 100 other users.
    const updates: Update[] = [privateMessage(1, 1)];
    for (let id = 2; id <= 1000; id++) updates.push(privateMessage(id, (id % 100) + 2));
    telegram.push(...updates);
    const intake = new UpdateIntake(processor, { getUpdates: telegram.getUpdates, clock });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });

    await until(() => processed.length === 999);
    expect(processed).not.toContain(1);
    const snapshot = intake.snapshot();
    expect(snapshot.fetched).toBe(1000);
    expect(telegram.returned / 1000).toBe(1); // fetches per update
    expect(telegram.pending).toBe(0); // all confirmed, though update 1 still runs
    expect(snapshot.confirmedOffset).toBe(1001);
    expect(snapshot.unfinished).toBe(1);
    expect(snapshot.offsetLag).toBe(1000);
    expect(snapshot.state).toBe("polling");

    hung.resolve();
    await until(() => processed.length === 1000);
    await until(() => intake.snapshot().unfinished === 0);
    expect(intake.snapshot()).toMatchObject({ finished: 1000, offsetLag: 0 });
    stop.abort();
    await running;
    expect(intake.snapshot().state).toBe("idle");
    await intake.close();
  });

  it("confirms offset = highest stored + 1 on the next call, before processing ends", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const rec = recorder();
    const gate = rec.gate(10);
    telegram.push(privateMessage(10, 1), privateMessage(11, 2));
    const intake = new UpdateIntake(rec.processor, {
      getUpdates: telegram.getUpdates,
      clock,
      pollLimit: 50,
      pollTimeoutSeconds: 20,
      allowedUpdates: ["message"],
    });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => telegram.calls.length === 2);
    expect(telegram.calls).toEqual([
      { limit: 50, timeout: 20, allowed_updates: ["message"] },
      { offset: 12, limit: 50, timeout: 20, allowed_updates: ["message"] },
    ]);
    expect(rec.finished).toEqual([11]);
    gate.resolve();
    stop.abort();
    await running;
    await intake.close();
    expect(rec.finished).toEqual([11, 10]);
  });

  it("starts from the journal's highest update_id", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const journal = new MemoryUpdateJournal();
    await journal.append([privateMessage(41, 1)]);
    await journal.finish(41);
    const intake = new UpdateIntake(() => {}, { getUpdates: telegram.getUpdates, clock, journal });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => telegram.calls.length === 1);
    expect(telegram.calls[0]?.offset).toBe(42);
    stop.abort();
    await running;
    await intake.close();
  });

  it("does not dispatch an update Telegram sends again", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const rec = recorder();
    const journal = new MemoryUpdateJournal();
    const intake = new UpdateIntake(rec.processor, {
      getUpdates: telegram.getUpdates,
      clock,
      journal,
    });
    telegram.push(privateMessage(1, 1), privateMessage(2, 2));
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => rec.finished.length === 2);
    // A webhook retry or a second source delivers the same ids again.
    expect(await intake.accept(privateMessage(2, 2))).toEqual({ status: "duplicate" });
    expect(await intake.accept(privateMessage(1, 1))).toEqual({ status: "duplicate" });
    expect(rec.started).toEqual([1, 2]);
    expect(intake.snapshot().duplicates).toBe(2);
    stop.abort();
    await running;
    await intake.close();
  });

  it("skips duplicates inside a batch", async () => {
    const clock = new ManualClock();
    const rec = recorder();
    const journal = new MemoryUpdateJournal();
    await journal.append([privateMessage(5, 1)]);
    await journal.finish(5);
    const batches: Update[][] = [
      [privateMessage(6, 1), privateMessage(6, 1), privateMessage(7, 2), privateMessage(7, 2)],
    ];
    const stop = new AbortController();
    const intake = new UpdateIntake(rec.processor, {
      clock,
      journal,
      getUpdates: async () => {
        const batch = batches.shift();
        if (batch === undefined) {
          stop.abort();
          return [];
        }
        return batch;
      },
    });
    await intake.run({ signal: stop.signal });
    await until(() => rec.finished.length === 2);
    expect(rec.started).toEqual([6, 7]);
    expect(intake.snapshot()).toMatchObject({ fetched: 4, appended: 2, duplicates: 2 });
    await intake.close();
  });
});

// The webhook entry point: accept() resolves once the update is journaled, in order, with
// duplicates recognised and a typed `busy` at the bound instead of a silent drop.

import type { Update } from "@grammyjs/types";
import { createDeferred, ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import {
  type AppendResult,
  MemoryUpdateJournal,
  UpdateIntake,
  type UpdateJournal,
} from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { recorder } from "./harness.js";
import { until } from "./intake-harness.js";

describe("UpdateIntake.accept", () => {
  it("resolves `stored` only once the journal holds the update", async () => {
    const clock = new ManualClock();
    const journal = new MemoryUpdateJournal();
    const gate = createDeferred<void>();
    const append = journal.append.bind(journal);
    journal.append = async (updates): Promise<AppendResult> => {
      await gate.promise; // a slow, durable append
      return append(updates);
    };
    const rec = recorder();
    const intake = new UpdateIntake(rec.processor, { clock, journal });
    let answer: unknown;
    void intake.accept(privateMessage(1, 1)).then((result) => {
      answer = result;
    });
    await clock.flush();
    expect(answer).toBeUndefined();
    expect(rec.started).toEqual([]);
    gate.resolve();
    await until(() => answer !== undefined);
    expect(answer).toEqual({ status: "stored" });
    expect(journal.snapshot().unfinished + rec.finished.length).toBe(1);
    await until(() => rec.finished.length === 1);
    await intake.close();
  });

  it("keeps arrival order per principal, also across concurrent accepts", async () => {
    const clock = new ManualClock();
    const rec = recorder();
    rec.gate(1);
    const intake = new UpdateIntake(rec.processor, { clock });
    const results = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((id) => intake.accept(privateMessage(id, id % 2))),
    );
    expect(results.every((result) => result.status === "stored")).toBe(true);
    await until(() => rec.finished.length === 3); // user 0: 2, 4, 6
    expect(rec.finished).toEqual([2, 4, 6]);
    await intake.close({ timeoutMs: 0 });
  });

  it("answers `duplicate` for a retry, stored or still running", async () => {
    const clock = new ManualClock();
    const rec = recorder();
    const gate = rec.gate(1);
    const intake = new UpdateIntake(rec.processor, { clock });
    expect(await intake.accept(privateMessage(1, 1))).toEqual({ status: "stored" });
    expect(await intake.accept(privateMessage(1, 1))).toEqual({ status: "duplicate" });
    gate.resolve();
    await until(() => intake.snapshot().finished === 1);
    expect(await intake.accept(privateMessage(1, 1))).toEqual({ status: "duplicate" });
    expect(rec.started).toEqual([1]);
    await intake.close();
  });

  it("answers `busy` at maxJournalUpdates, storing nothing, and takes it once there is room", async () => {
    const clock = new ManualClock();
    const journal = new MemoryUpdateJournal();
    const rec = recorder();
    const gate = rec.gate(1);
    rec.gate(2);
    const intake = new UpdateIntake(rec.processor, { clock, journal, maxJournalUpdates: 2 });
    expect(await intake.accept(privateMessage(1, 1))).toEqual({ status: "stored" });
    expect(await intake.accept(privateMessage(2, 2))).toEqual({ status: "stored" });
    expect(await intake.accept(privateMessage(3, 3))).toEqual({ status: "busy" });
    expect(journal.snapshot().unfinished).toBe(2);
    gate.resolve();
    await until(() => intake.snapshot().unfinished === 1);
    expect(await intake.accept(privateMessage(3, 3))).toEqual({ status: "stored" });
    expect(intake.snapshot().busy).toBe(1);
    await intake.close({ timeoutMs: 0 });
  });

  it("counts appends in flight against the bound", async () => {
    const clock = new ManualClock();
    const intake = new UpdateIntake(() => new Promise(() => {}), { clock, maxJournalUpdates: 1 });
    const [first, second] = await Promise.all([
      intake.accept(privateMessage(1, 1)),
      intake.accept(privateMessage(2, 2)),
    ]);
    expect([first, second]).toEqual([{ status: "stored" }, { status: "busy" }]);
    await intake.close({ timeoutMs: 0 });
  });

  it("replays the journal before the first accepted update", async () => {
    const clock = new ManualClock();
    const journal = new MemoryUpdateJournal();
    await journal.append([privateMessage(1, 7), privateMessage(2, 7)]);
    const rec = recorder();
    const intake = new UpdateIntake(rec.processor, { clock, journal });
    await intake.accept(privateMessage(3, 7));
    await until(() => rec.finished.length === 3);
    expect(rec.finished).toEqual([1, 2, 3]);
    expect(intake.snapshot().replayed).toBe(2);
    await intake.close();
  });

  it("rejects an update without an integer update_id, an aborted signal and a failed store", async () => {
    const clock = new ManualClock();
    const journal: UpdateJournal = new MemoryUpdateJournal();
    journal.append = () => Promise.reject(new Error("disk full"));
    const intake = new UpdateIntake(() => {}, { clock, journal });
    await expect(intake.accept({ update_id: 1.5 } as Update)).rejects.toThrow(TypeError);
    await expect(intake.accept(null as unknown as Update)).rejects.toThrow(TypeError);
    const aborted = AbortSignal.abort(new Error("gone"));
    await expect(intake.accept(privateMessage(1, 1), { signal: aborted })).rejects.toThrow("gone");
    await expect(intake.accept(privateMessage(1, 1))).rejects.toThrow("disk full");
    expect(intake.snapshot().unfinished).toBe(0);
    await intake.close();
  });
});

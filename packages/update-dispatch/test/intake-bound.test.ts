// The bound on stored-but-unfinished updates: fetching stops at maxJournalUpdates and resumes below
// it, nothing is dropped, and the hand-over to the dispatcher never meets a rejection.

import type { Update } from "@grammyjs/types";
import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { UpdateIntake } from "../src/index.js";
import { groupMessage, privateMessage } from "./fixtures.js";
import { recorder } from "./harness.js";
import { FakeTelegram, until } from "./intake-harness.js";

describe("UpdateIntake bound", () => {
  it("stops fetching at maxJournalUpdates and resumes when processing frees room", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const rec = recorder();
    const gates = Array.from({ length: 8 }, (_, index) => rec.gate(index + 1));
    for (let id = 1; id <= 12; id++) telegram.push(privateMessage(id, id));
    const intake = new UpdateIntake(rec.processor, {
      getUpdates: telegram.getUpdates,
      clock,
      maxJournalUpdates: 5,
      pollLimit: 3,
    });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });

    await until(() => intake.snapshot().state === "paused");
    // Batches of 3, then 2 (the room left); then the bound.
    expect(telegram.calls.map((call) => [call.offset, call.limit])).toEqual([
      [undefined, 3],
      [4, 2],
    ]);
    expect(intake.snapshot()).toMatchObject({ unfinished: 5, fetched: 5, pauses: 1 });
    // 4 and 5 are stored; the next poll confirms them. 6…12 wait with Telegram: none lost.
    expect(telegram.pending).toBe(9);

    gates[0]?.resolve();
    await until(() => telegram.calls.length === 3 && intake.snapshot().state === "paused");
    expect(telegram.calls[2]).toMatchObject({ offset: 6, limit: 1 });
    expect(intake.snapshot()).toMatchObject({ unfinished: 5, pauses: 2 });

    for (const gate of gates) gate.resolve();
    await until(() => rec.finished.length === 12);
    expect([...rec.finished].sort((a, b) => a - b)).toEqual(
      Array.from({ length: 12 }, (_, index) => index + 1),
    );
    expect(intake.snapshot().fetched).toBe(12);
    expect(telegram.returned).toBe(12); // each update fetched once, even at the bound
    stop.abort();
    await running;
    await intake.close();
  });

  it("hands over in order without a rejection when the dispatcher's bounds are tiny", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const rec = recorder();
    const updates: Update[] = [];
    for (let id = 1; id <= 60; id++) updates.push(groupMessage(id, -100, id % 6));
    telegram.push(...updates);
    const intake = new UpdateIntake(rec.processor, {
      getUpdates: telegram.getUpdates,
      clock,
      dispatcher: {
        maxQueuedPerPrincipal: 1,
        maxActivePrincipals: 2,
        maxConcurrency: 1,
        maxWaitingEnqueues: 2,
      },
    });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => rec.finished.length === 60);
    for (let user = 0; user < 6; user++) {
      const ids = rec.started.filter((id) => id % 6 === user);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    }
    const { dispatcher } = intake.snapshot();
    expect(dispatcher.waiting).toBe(0);
    expect(Object.values(dispatcher.rejected)).toEqual([0, 0, 0, 0]);
    stop.abort();
    await running;
    await intake.close();
  });
});

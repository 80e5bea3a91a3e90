// Processor runs are used again once they ended: whatever a reused run's earlier call left behind
// (a thenable that keeps its callbacks, a promise that settles after its timeout) must not decide
// the outcome of a later call, and concurrent calls never share a signal.

import { createDeferred, ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { dispatcherAccess } from "../src/dispatcher/dispatcher-access.js";
import type { FinishedOutcome } from "../src/dispatcher/run-outcomes.js";
import { UpdateDispatcher, type UpdateProcessor } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { settle } from "./harness.js";

function hooked(processor: UpdateProcessor, options: { timeoutMs?: number } = {}) {
  const clock = new ManualClock();
  const dispatcher = new UpdateDispatcher(processor, { clock, maxConcurrency: 1, ...options });
  const ended: [number, FinishedOutcome][] = [];
  dispatcherAccess(dispatcher).onFinished((updateId, outcome) => {
    ended.push([updateId, outcome]);
  });
  return { dispatcher, ended, clock };
}

describe("reused processor runs", () => {
  it("ignores a thenable that calls back again while a later call runs", async () => {
    let callAgain: (() => void) | undefined;
    const gate = createDeferred<void>();
    const { dispatcher, ended } = hooked((update) => {
      if (update.update_id === 2) return gate.promise;
      return {
        // biome-ignore lint/suspicious/noThenProperty: a hostile thenable is the point of the test
        then(resolve: () => void, reject: () => void) {
          resolve();
          callAgain = reject;
        },
      };
    });
    await dispatcher.enqueue(privateMessage(1, 1));
    await settle();
    await dispatcher.enqueue(privateMessage(2, 2));
    await settle();
    callAgain?.(); // while update 2 runs: it must not end it
    await settle();
    expect(ended).toEqual([[1, "succeeded"]]);
    expect(dispatcher.snapshot()).toMatchObject({ inFlight: 1, failed: 0 });
    gate.resolve();
    await settle();
    expect(ended).toEqual([
      [1, "succeeded"],
      [2, "succeeded"],
    ]);
    await dispatcher.close();
  });

  it("keeps a timed-out run apart: its late settling ends no later call", async () => {
    const late = createDeferred<void>();
    const gate = createDeferred<void>();
    const signals: AbortSignal[] = [];
    const { dispatcher, ended, clock } = hooked(
      (update, signal) => {
        signals.push(signal);
        if (update.update_id === 1) return late.promise;
        return update.update_id === 3 ? gate.promise : Promise.resolve();
      },
      { timeoutMs: 100 },
    );
    await dispatcher.enqueue(privateMessage(1, 1));
    await settle();
    await clock.advance(100);
    for (let id = 2; id <= 3; id++) await dispatcher.enqueue(privateMessage(id, id));
    await settle();
    late.reject(new Error("late")); // the abandoned run settles while update 3 runs
    await settle();
    expect(ended).toEqual([
      [1, "timed-out"],
      [2, "succeeded"],
    ]);
    expect(dispatcher.snapshot()).toMatchObject({ inFlight: 1, failed: 0 });
    gate.resolve();
    await settle();
    expect(ended.at(-1)).toEqual([3, "succeeded"]);
    expect(signals[0]?.aborted).toBe(true);
    expect(signals.slice(1).every((signal) => !signal.aborted)).toBe(true);
    await dispatcher.close();
  });

  it("gives calls that run at once signals of their own, and a pristine one after reuse", async () => {
    const gates = [createDeferred<void>(), createDeferred<void>(), createDeferred<void>()];
    const running: AbortSignal[] = [];
    const seen: AbortSignal[] = [];
    const clock = new ManualClock();
    const dispatcher = new UpdateDispatcher(
      async (update, signal) => {
        running.push(signal);
        seen.push(signal);
        expect(signal.aborted).toBe(false);
        await gates[(update.update_id - 1) % 3]?.promise;
        running.splice(running.indexOf(signal), 1);
      },
      { clock, maxConcurrency: 3 },
    );
    for (let id = 1; id <= 9; id++) await dispatcher.enqueue(privateMessage(id, id));
    await settle();
    for (let round = 0; round < 3; round++) {
      expect(new Set(running).size).toBe(running.length);
      for (const gate of gates) gate.resolve();
      await settle();
    }
    expect(seen).toHaveLength(9);
    expect(dispatcher.snapshot()).toMatchObject({ succeeded: 9, inFlight: 0 });
    await dispatcher.close();
  });
});

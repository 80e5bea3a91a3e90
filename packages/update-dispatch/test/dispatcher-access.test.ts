// The intake's internal access to its dispatcher: the finished hook it marks journal entries
// finished by (once per update whose processing ended for good, with its outcome and principal,
// never for one that close() interrupted), and the hand-over without a promise per update.

import { createDeferred, ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { dispatchKeyOf } from "../src/dispatcher/dispatch-key.js";
import { dispatcherAccess } from "../src/dispatcher/dispatcher-access.js";
import type { FinishedOutcome } from "../src/dispatcher/run-outcomes.js";
import { UpdateDispatcher, type UpdateProcessor } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { settle } from "./harness.js";

function hooked(processor: UpdateProcessor, options: { timeoutMs?: number } = {}) {
  const clock = new ManualClock();
  const dispatcher = new UpdateDispatcher(processor, { clock, ...options });
  const ended: [number, FinishedOutcome][] = [];
  const principals: unknown[] = [];
  dispatcherAccess(dispatcher).onFinished((updateId, outcome, keyId) => {
    ended.push([updateId, outcome]);
    principals.push(keyId);
  });
  return { dispatcher, ended, principals, clock };
}

describe("the finished hook", () => {
  it("reports each outcome once, where the run ends", async () => {
    const hang = createDeferred<void>();
    const { dispatcher, ended, clock } = hooked(
      (update) => {
        switch (update.update_id) {
          case 1:
            return undefined;
          case 2:
            return Promise.reject(new Error("failed"));
          case 3:
            throw new Error("threw");
          case 4:
            return hang.promise;
          default:
            // A hostile thenable calls back twice, both ways: the first call counts.
            return {
              // biome-ignore lint/suspicious/noThenProperty: the point of the test
              then(resolve: () => void, reject: () => void) {
                resolve();
                reject();
                resolve();
              },
            };
        }
      },
      { timeoutMs: 1_000 },
    );
    for (let id = 1; id <= 5; id++) await dispatcher.enqueue(privateMessage(id, id));
    await settle();
    expect(ended).toEqual([
      [1, "succeeded"],
      [2, "failed"],
      [3, "threw"],
      [5, "succeeded"],
    ]);
    await clock.advance(1_000);
    expect(ended.slice(4)).toEqual([[4, "timed-out"]]);
    hang.resolve(); // settles late: not reported again
    await settle();
    expect(ended).toHaveLength(5);
    await dispatcher.close();
  });

  it("is not told of an update close() interrupts, nor of one that never started", async () => {
    const hang = createDeferred<void>();
    const { dispatcher, ended } = hooked(() => hang.promise);
    await dispatcher.enqueue(privateMessage(1, 1));
    await dispatcher.enqueue(privateMessage(2, 1)); // queued behind 1
    await settle();
    const closed = await dispatcher.close({ timeoutMs: 0 });
    expect(closed.interrupted.map((update) => update.update_id)).toEqual([1]);
    expect(closed.unstarted.map((update) => update.update_id)).toEqual([2]);
    hang.resolve();
    await settle();
    expect(ended).toEqual([]);
  });

  it("is not told of an update without an integer update_id", async () => {
    const { dispatcher, ended } = hooked(() => {});
    await dispatcher.enqueue({ update_id: 1.5 } as never);
    await dispatcher.enqueue(privateMessage(2, 2));
    await settle();
    expect(ended).toEqual([[2, "succeeded"]]);
    await dispatcher.close();
  });

  it("names the principal the update ran for", async () => {
    const { dispatcher, principals } = hooked(() => {});
    await dispatcher.enqueue(privateMessage(1, 77));
    await settle();
    expect(principals).toEqual([dispatchKeyOf(privateMessage(1, 77)).id]);
    await dispatcher.close();
  });
});

describe("the hand-over", () => {
  it("takes an update at once, or says why not, without taking it", async () => {
    const hang = createDeferred<void>();
    const dispatcher = new UpdateDispatcher(() => hang.promise, {
      maxQueuedPerPrincipal: 1,
      maxActivePrincipals: 1,
      maxWaitingEnqueues: 1,
    });
    const access = dispatcherAccess(dispatcher);
    const give = (id: number, userId: number) => {
      const update = privateMessage(id, userId);
      return access.handOver(update, dispatchKeyOf(update));
    };
    expect(access.roomFor(10)).toBe(2); // maxQueuedPerPrincipal + the running one
    expect(give(1, 10)).toBe("accepted");
    expect(give(1, 10)).toBe("duplicate");
    expect(give(2, 10)).toBe("accepted");
    await settle();
    expect(access.roomFor(10)).toBe(0); // 1 runs, 2 waits
    expect(give(3, 10)).toBe("full"); // not waiting: the intake keeps it in its journal
    const waiting = give(4, 20); // user 20 waits to become active
    expect(waiting).toBeInstanceOf(Promise);
    expect(access.roomFor(20)).toBe(1);
    expect(give(5, 30)).toBe("waiting-full");
    expect(dispatcher.snapshot()).toMatchObject({ accepted: 2, waiting: 1, queued: 1 });
    expect(Object.values(dispatcher.snapshot().rejected)).toEqual([0, 0, 0, 0]);
    const closing = dispatcher.close({ timeoutMs: 0 });
    expect(await waiting).toEqual({ status: "rejected", reason: "closed" });
    expect(give(6, 10)).toBe("closed");
    hang.resolve();
    await closing;
  });

  it("keeps no record of ids once left to the journal", async () => {
    const dispatcher = new UpdateDispatcher(() => {});
    const access = dispatcherAccess(dispatcher);
    access.leaveIdsToJournal();
    const update = privateMessage(1, 10);
    expect(access.handOver(update, dispatchKeyOf(update))).toBe("accepted");
    await settle();
    expect(access.handOver(update, dispatchKeyOf(update))).toBe("accepted"); // the journal's job
    await settle();
    expect(dispatcher.snapshot()).toMatchObject({ succeeded: 2, duplicates: 0 });
    expect(dispatcher.watermark).toBeUndefined();
    await dispatcher.close();
  });
});

describe("principal records used again", () => {
  it("a run abandoned at its timeout that settles later does not touch the record's next principal", async () => {
    const clock = new ManualClock();
    const late = createDeferred<void>();
    const second = createDeferred<void>();
    const started: number[] = [];
    const dispatcher = new UpdateDispatcher(
      (update) => {
        started.push(update.update_id);
        return update.update_id === 1 ? late.promise : second.promise;
      },
      { clock, timeoutMs: 100, maxConcurrency: 4 },
    );
    await dispatcher.enqueue(privateMessage(1, 10));
    await settle();
    await clock.advance(100); // 1 times out: user 10 retires, its record is kept for the next
    await dispatcher.enqueue(privateMessage(2, 20)); // user 20 gets that record
    await dispatcher.enqueue(privateMessage(3, 20)); // queued behind 2
    await settle();
    late.resolve(); // the abandoned run of user 10 settles now
    await settle();
    expect(started).toEqual([1, 2]); // 3 still waits for 2: user 20's order holds
    expect(dispatcher.snapshot()).toMatchObject({ inFlight: 1, queued: 1, abandoned: 0 });
    second.resolve();
    await settle();
    expect(started).toEqual([1, 2, 3]);
    await dispatcher.close();
  });
});

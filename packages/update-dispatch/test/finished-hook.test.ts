// The dispatcher's internal finished hook, which the intake marks journal entries finished by:
// once per update whose processing ended for good, with its outcome, and never for one that
// close() interrupted.

import { createDeferred, ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { type FinishedOutcome, onFinished } from "../src/dispatcher/update-dispatcher.js";
import { UpdateDispatcher, type UpdateProcessor } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { settle } from "./harness.js";

function hooked(processor: UpdateProcessor, options: { timeoutMs?: number } = {}) {
  const clock = new ManualClock();
  const dispatcher = new UpdateDispatcher(processor, { clock, ...options });
  const ended: [number, FinishedOutcome][] = [];
  onFinished(dispatcher, (updateId, outcome) => ended.push([updateId, outcome]));
  return { dispatcher, ended, clock };
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
});

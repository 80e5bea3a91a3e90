import { createDeferred, type Deferred, ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { LeaseRenewal } from "../src/lease-renewal.js";

describe("LeaseRenewal", () => {
  const setup = () => {
    const clock = new ManualClock();
    const calls: number[] = [];
    const answers: Deferred<boolean>[] = [];
    const renewal = new LeaseRenewal(clock, 100, () => {
      calls.push(clock.now());
      const answer = createDeferred<boolean>();
      answers.push(answer);
      return answer.promise;
    });
    return { clock, calls, answers, renewal };
  };

  it("renews every interval, one renewal at a time: the next is armed once the last settled", async () => {
    const { clock, calls, answers, renewal } = setup();
    renewal.start();
    renewal.start();
    await clock.advance(350);
    // The first renewal has not answered: no second one overlaps it.
    expect(calls).toEqual([100]);
    answers[0]?.resolve(true);
    await clock.advance(100);
    expect(calls).toEqual([100, 450]);
    answers[1]?.resolve(true);
    await clock.advance(100);
    expect(calls).toEqual([100, 450, 550]);
    expect(renewal.isRunning).toBe(true);
  });

  it("stops when a renewal says the lease is gone, when it rejects, and on stop()", async () => {
    for (const end of ["lost", "rejected", "stopped"] as const) {
      const { clock, calls, answers, renewal } = setup();
      renewal.start();
      await clock.advance(100);
      if (end === "lost") answers[0]?.resolve(false);
      if (end === "rejected") answers[0]?.reject(new Error("down"));
      if (end === "stopped") {
        renewal.stop();
        answers[0]?.resolve(true);
      }
      await clock.advance(1_000);
      expect(calls).toEqual([100]);
      expect(renewal.isRunning).toBe(false);
    }
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../src/index.js";

describe("ManualClock", () => {
  it("starts at the given time and moves only when advanced", async () => {
    const clock = new ManualClock(500);
    expect(clock.now()).toBe(500);
    await clock.advance(250);
    expect(clock.now()).toBe(750);
  });

  it("fires due timers in time order, ties in insertion order, at their own time", async () => {
    const clock = new ManualClock();
    const fired: string[] = [];
    clock.setTimer(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimer(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimer(() => fired.push(`c@${clock.now()}`), 20);
    clock.setTimer(() => fired.push(`late@${clock.now()}`), 31);
    await clock.advance(30);
    expect(fired).toEqual(["a@10", "b@20", "c@20"]);
    expect(clock.pendingTimers).toBe(1);
    expect(clock.nextTimerAt()).toBe(31);
  });

  it("runs continuations between timers so awaited sleeps chain deterministically", async () => {
    const clock = new ManualClock();
    const seen: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(100);
        seen.push(clock.now());
      }
    })();
    await clock.advance(1000);
    await loop;
    expect(seen).toEqual([100, 200, 300]);
    expect(clock.now()).toBe(1000);
  });

  it("cancels timers, idempotently", async () => {
    const clock = new ManualClock();
    let fired = false;
    const timer = clock.setTimer(() => {
      fired = true;
    }, 5);
    timer.cancel();
    timer.cancel();
    await clock.advance(10);
    expect(fired).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it("rejects a sleep with the abort reason and removes its timer", async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const sleep = clock.sleep(1000, { signal: controller.signal });
    const reason = new Error("stop");
    controller.abort(reason);
    await expect(sleep).rejects.toBe(reason);
    expect(clock.pendingTimers).toBe(0);
    await expect(clock.sleep(1, { signal: controller.signal })).rejects.toBe(reason);
  });

  it("runAll fires everything and guards against endless re-arming", async () => {
    const clock = new ManualClock();
    const order: number[] = [];
    clock.setTimer(() => order.push(2), 2000);
    clock.setTimer(() => order.push(1), 1000);
    await clock.runAll();
    expect(order).toEqual([1, 2]);
    expect(clock.now()).toBe(2000);

    const rearm = (): void => {
      clock.setTimer(rearm, 1);
    };
    rearm();
    await expect(clock.runAll(50)).rejects.toThrow(/50 timers/);
  });

  it("rejects invalid arguments with errors naming them", async () => {
    const clock = new ManualClock();
    await expect(clock.advance(-1)).rejects.toThrow(RangeError);
    await expect(clock.advance(Number.NaN)).rejects.toThrow(/`ms`/);
    expect(() => clock.setTimer(() => {}, Number.NaN)).toThrow(/`delayMs`/);
    expect(() => new ManualClock(Number.POSITIVE_INFINITY)).toThrow(/`startMs`/);
  });

  it("treats a negative delay as due now", async () => {
    const clock = new ManualClock(100);
    let at = -1;
    clock.setTimer(() => {
      at = clock.now();
    }, -50);
    await clock.advance(0);
    expect(at).toBe(100);
  });

  it("property: timers fire in (time, insertion) order whatever the advance steps", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 10 }),
        async (delays, steps) => {
          const clock = new ManualClock();
          const fired: { index: number; at: number; now: number }[] = [];
          delays.forEach((delay, index) => {
            clock.setTimer(() => fired.push({ index, at: delay, now: clock.now() }), delay);
          });
          for (const step of steps) await clock.advance(step);
          await clock.runAll();
          const expected = delays
            .map((delay, index) => ({ index, at: delay }))
            .sort((a, b) => a.at - b.at || a.index - b.index);
          expect(fired.map((f) => f.index)).toEqual(expected.map((e) => e.index));
          for (const f of fired) expect(f.now).toBe(f.at);
        },
      ),
      { numRuns: 100 },
    );
  });
});

// Withdrawn waits cost O(1) amortised each, however many are held: counted, not timed, as the
// number of Set elements the dispatcher walks while thousands of waits are withdrawn.

import { afterEach, describe, expect, it } from "vitest";
import { UpdateLedger } from "../src/dispatcher/update-ledger.js";
import { UpdateDispatcher } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { recorder } from "./harness.js";

const originalIterator = Set.prototype[Symbol.iterator];
const originalValues = Set.prototype.values;

/** Counts every element any Set iteration visits until {@link stopCounting}. */
function countSetVisits(): { readonly visits: number } {
  const counter = { visits: 0 };
  function counting<T>(this: Set<T>): SetIterator<T> {
    const inner = originalValues.call(this);
    const next = inner.next.bind(inner);
    return Object.assign(inner, {
      next() {
        const step = next();
        if (!step.done) counter.visits++;
        return step;
      },
    });
  }
  Set.prototype[Symbol.iterator] = counting;
  Set.prototype.values = counting;
  return counter;
}

function stopCounting(): void {
  Set.prototype[Symbol.iterator] = originalIterator;
  Set.prototype.values = originalValues;
}

afterEach(stopCounting);

describe("withdrawn waits beyond the held-id limit", () => {
  it("the ledger forgets the highest held id without scanning the held set", () => {
    const limit = 2_000;
    const ledger = new UpdateLedger(0, limit);
    for (let id = 1; id <= limit; id++) ledger.hold(id);
    const counter = countSetVisits();
    for (let id = limit + 1; id <= 3 * limit; id++) ledger.hold(id);
    stopCounting();
    // A scan per hold would visit about limit × 2·limit = 8,000,000 elements.
    expect(counter.visits).toBeLessThan(10 * 2 * limit);
    expect(ledger.watermark).toBeUndefined();
    ledger.finish(0);
    expect(ledger.watermark).toBe(0);
  });

  it("enqueue stays O(1) amortised when thousands of waits are withdrawn", async () => {
    const rec = recorder();
    // Held-id limit: 4,000 + 1 × (1 + 1) = 4,002.
    const dispatcher = new UpdateDispatcher(rec.processor, {
      maxQueuedPerPrincipal: 1,
      maxActivePrincipals: 1,
      maxWaitingEnqueues: 4_000,
    });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.enqueue(privateMessage(2, 42));
    const withdraw = async (from: number, to: number): Promise<void> => {
      for (let id = from; id <= to; id++) {
        const controller = new AbortController();
        const call = dispatcher.enqueue(privateMessage(id, 42), {
          wait: true,
          signal: controller.signal,
        });
        controller.abort();
        await call.catch(() => {});
      }
    };
    await withdraw(3, 4_100); // fills the held ids past their limit
    const counter = countSetVisits();
    await withdraw(4_101, 8_100);
    stopCounting();
    // A scan of the held set per withdrawal would visit about 4,000 × 4,000 = 16,000,000.
    expect(counter.visits).toBeLessThan(10 * 4_000);
    expect(dispatcher.watermark).toBeUndefined();
    gate.resolve();
    await dispatcher.drain();
    expect(rec.finished).toEqual([1, 2]);
    // Update 3 is the lowest held id: the watermark stays below it.
    expect(dispatcher.watermark).toBe(2);
  });
});

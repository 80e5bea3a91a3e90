import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { slotCeilingPerSecond } from "../src/dispatch/slot-ceiling.js";

/**
 * Makespan of one real schedule: whenever a slot is free, the oldest update whose principal is
 * idle starts (per-principal FIFO), as a dispatcher with no overhead would run it.
 */
function listScheduleMakespanMs(
  heldMs: readonly number[],
  principalOf: readonly number[],
  slots: number,
): number {
  const waiting = heldMs.map((_, index) => index);
  const busy = new Set<number>();
  const running: { endMs: number; principal: number }[] = [];
  let nowMs = 0;
  while (waiting.length > 0 || running.length > 0) {
    for (let position = 0; position < waiting.length && running.length < slots; ) {
      const index = waiting[position] as number;
      const principal = principalOf[index] as number;
      const isBlocked =
        busy.has(principal) ||
        waiting.slice(0, position).some((earlier) => principalOf[earlier] === principal);
      if (isBlocked) {
        position++;
        continue;
      }
      waiting.splice(position, 1);
      busy.add(principal);
      running.push({ endMs: nowMs + (heldMs[index] as number), principal });
    }
    running.sort((a, b) => a.endMs - b.endMs);
    const next = running.shift();
    if (next === undefined) break;
    nowMs = next.endMs;
    busy.delete(next.principal);
  }
  return nowMs;
}

describe("slotCeilingPerSecond", () => {
  it("is bound by the slots when work spreads over many principals", () => {
    // 8 principals × 10 ms on 2 slots: at least 40 ms, so at most 200 updates/s.
    const held = new Float64Array(8).fill(10);
    const principals = Uint32Array.from({ length: 8 }, (_, index) => index);
    expect(slotCeilingPerSecond(held, principals, 8, 2)).toBe(200);
  });

  it("is bound by the busiest principal when its updates alone take longer", () => {
    // Principal 0 holds 3 × 10 ms in a row; the other 3 updates fit beside it on 4 slots.
    const held = new Float64Array(6).fill(10);
    const principals = Uint32Array.from([0, 0, 0, 1, 2, 3]);
    expect(slotCeilingPerSecond(held, principals, 4, 4)).toBe(200);
  });

  it("leaves out updates that never finished", () => {
    const held = Float64Array.from([10, Number.NaN, 10, Number.NaN]);
    const principals = Uint32Array.from([0, 1, 2, 3]);
    expect(slotCeilingPerSecond(held, principals, 4, 1)).toBe(100);
  });

  it("names what is wrong with its input", () => {
    const held = new Float64Array(2).fill(1);
    const principals = Uint32Array.from([0, 1]);
    expect(() => slotCeilingPerSecond(held, principals, 2, 0)).toThrow(/slots.*got 0/);
    expect(() => slotCeilingPerSecond(held, principals, 2, 1.5)).toThrow(/slots.*got 1.5/);
    expect(() => slotCeilingPerSecond(held, Uint32Array.from([0]), 2, 1)).toThrow(
      /heldMs has 2 entries but principalOf has 1/,
    );
    expect(() => slotCeilingPerSecond(held, Uint32Array.from([0, 5]), 2, 1)).toThrow(
      /principal 5, beyond 2/,
    );
  });

  it("is never beaten by a real schedule of the same updates", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ held: fc.integer({ min: 1, max: 30 }), principal: fc.nat(5) }), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.integer({ min: 1, max: 8 }),
        (updates, slots) => {
          const held = updates.map((update) => update.held);
          const principalOf = updates.map((update) => update.principal);
          const ceiling = slotCeilingPerSecond(
            Float64Array.from(held),
            Uint32Array.from(principalOf),
            6,
            slots,
          );
          const achieved =
            (updates.length * 1000) / listScheduleMakespanMs(held, principalOf, slots);
          expect(achieved).toBeLessThanOrEqual(ceiling * (1 + 1e-12));
        },
      ),
    );
  });
});

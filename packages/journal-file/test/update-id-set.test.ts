// The stored-id index: random adds and floors against a plain Set, and its ranges stay sorted,
// disjoint, non-adjacent and round-trip through the base record.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { UpdateIdSet } from "../src/update-id-set.js";

type Step = { readonly add: number } | { readonly floor: number };

describe("UpdateIdSet", () => {
  it("agrees with a Set and a floor, and keeps its ranges canonical", () => {
    const step: fc.Arbitrary<Step> = fc.oneof(
      { weight: 5, arbitrary: fc.record({ add: fc.nat(60) }) },
      { weight: 1, arbitrary: fc.record({ floor: fc.integer({ min: -2, max: 60 }) }) },
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 80 }), (steps) => {
        const set = new UpdateIdSet();
        const reference = new Set<number>();
        for (const next of steps) {
          if ("add" in next) {
            set.add(next.add);
            reference.add(next.add);
          } else {
            set.raiseFloor(next.floor);
            for (let id = 0; id <= next.floor; id++) reference.add(id);
          }
        }
        for (let id = 0; id <= 62; id++) expect(set.has(id), `id ${id}`).toBe(reference.has(id));
        const ranges = set.ranges();
        ranges.forEach(([start, end], index) => {
          expect(start).toBeLessThanOrEqual(end);
          const previous = ranges[index - 1];
          if (previous !== undefined) expect(start).toBeGreaterThan(previous[1] + 1);
        });
        expect(UpdateIdSet.from(ranges).ranges()).toEqual(ranges);
        expect(set.rangeCount).toBe(ranges.length);
      }),
      { numRuns: 300 },
    );
  });

  it("holds a run of consecutive ids as one range", () => {
    const set = new UpdateIdSet();
    for (let id = 500_000; id < 600_000; id++) set.add(id);
    expect(set.ranges()).toEqual([[500_000, 599_999]]);
    expect(set.has(499_999)).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { jainIndex } from "../src/index.js";

describe("jainIndex", () => {
  it("is 1 for equal shares and 1/n when one takes all", () => {
    expect(jainIndex([3, 3, 3])).toBe(1);
    expect(jainIndex([9, 0, 0])).toBeCloseTo(1 / 3);
    expect(jainIndex([1, 3])).toBeCloseTo(16 / 20);
  });

  it("is NaN when nothing was served and a RangeError for a negative share", () => {
    expect(jainIndex([])).toBeNaN();
    expect(jainIndex([0, 0])).toBeNaN();
    expect(() => jainIndex([1, -1])).toThrow(new RangeError("Expected shares to be >= 0, got -1"));
    expect(() => jainIndex([Number.NaN])).toThrow(RangeError);
  });
});

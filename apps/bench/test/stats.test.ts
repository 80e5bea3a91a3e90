import { describe, expect, it } from "vitest";
import {
  formatCount,
  formatRatio,
  formatSpread,
  median,
  percentile,
  ratio,
  spread,
  summarize,
} from "../src/stats.js";

describe("percentile", () => {
  it("takes the nearest rank: the smallest value with at least p% at or below it", () => {
    const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentile(sorted, 50)).toBe(5);
    expect(percentile(sorted, 90)).toBe(9);
    expect(percentile(sorted, 99)).toBe(10);
    expect(percentile(sorted, 100)).toBe(10);
    expect(percentile(sorted, 0)).toBe(1);
  });

  it("gives NaN without samples and rejects a p outside 0..100", () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow("Expected `p` to be in 0..100, got NaN");
  });
});

describe("summarize", () => {
  it("summarises unsorted samples without changing them", () => {
    const samples = [5, 1, 4, 2, 3];
    const summary = summarize(samples);
    expect(samples).toEqual([5, 1, 4, 2, 3]);
    expect(summary).toEqual({ count: 5, min: 1, p50: 3, p90: 5, p99: 5, max: 5, mean: 3 });
  });

  it("is all NaN for no samples", () => {
    const summary = summarize([]);
    expect(summary.count).toBe(0);
    expect(summary.p50).toBeNaN();
    expect(summary.mean).toBeNaN();
  });
});

describe("median and spread", () => {
  it("takes the middle value, the lower middle one for an even count", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2);
    expect(spread([0.5, 0.2, 0.9])).toEqual({ median: 0.5, min: 0.2, max: 0.9 });
  });

  it("is NaN without values or when any value is not finite", () => {
    expect(median([])).toBeNaN();
    expect(spread([1, Number.NaN, 3]).max).toBeNaN();
    expect(median([1, Number.POSITIVE_INFINITY])).toBeNaN();
  });

  it("shows the range beside the median unless it is a single value", () => {
    expect(formatSpread({ median: 0.5, min: 0.25, max: 0.75 }, formatRatio)).toBe(
      "0.50× (0.25×–0.75×)",
    );
    expect(formatSpread(spread([2, 2]), formatRatio)).toBe("2.00×");
    expect(formatSpread(spread([]), formatRatio)).toBe("n/a");
  });
});

describe("ratio and formatting", () => {
  it("divides by the baseline, with 0/0 = 1 and x/0 undefined", () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(0, 0)).toBe(1);
    expect(ratio(5, 0)).toBeNaN();
    expect(ratio(Number.POSITIVE_INFINITY, 1)).toBeNaN();
  });

  it("shows three significant digits at every magnitude", () => {
    expect(formatRatio(1)).toBe("1.00×");
    expect(formatRatio(0.5)).toBe("0.50×");
    expect(formatRatio(0.043)).toBe("0.043×");
    expect(formatRatio(12.44)).toBe("12.4×");
    expect(formatRatio(1204.4)).toBe("1,204×");
    expect(formatRatio(0)).toBe("0×");
    expect(formatRatio(Number.NaN)).toBe("n/a");
  });

  it("formats counts with separators", () => {
    expect(formatCount(12345.4)).toBe("12,345");
    expect(formatCount(Number.NaN)).toBe("n/a");
  });
});

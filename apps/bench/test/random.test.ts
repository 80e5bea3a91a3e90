import { describe, expect, it } from "vitest";
import { randomInt, seededRandom, zipfSampler } from "../src/random.js";

describe("seededRandom", () => {
  it("repeats its sequence for a seed and differs between seeds", () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const first = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(first);
    expect(Array.from({ length: 5 }, () => c())).not.toEqual(first);
    for (const value of first) {
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
    }
  });

  it("draws integers across the whole inclusive range", () => {
    const random = seededRandom(1);
    const seen = new Set(Array.from({ length: 500 }, () => randomInt(random, 3, 6)));
    expect([...seen].sort()).toEqual([3, 4, 5, 6]);
  });
});

describe("zipfSampler", () => {
  it("favours low ranks in proportion to 1/(rank+1)^s", () => {
    const draw = zipfSampler(4, 1, seededRandom(9));
    const counts = [0, 0, 0, 0];
    for (let index = 0; index < 20_000; index++) {
      const rank = draw();
      counts[rank] = (counts[rank] as number) + 1;
    }
    // Expected shares for s = 1 over 4 ranks: 12/25, 6/25, 4/25, 3/25.
    expect((counts[0] as number) / 20_000).toBeCloseTo(0.48, 1);
    expect((counts[3] as number) / 20_000).toBeCloseTo(0.12, 1);
    expect(counts[0]).toBeGreaterThan(counts[1] as number);
  });

  it("is uniform with exponent 0 and validates its arguments", () => {
    const draw = zipfSampler(2, 0, seededRandom(3));
    let zeros = 0;
    for (let index = 0; index < 10_000; index++) if (draw() === 0) zeros++;
    expect(zeros / 10_000).toBeCloseTo(0.5, 1);
    expect(() => zipfSampler(0, 1, Math.random)).toThrow(RangeError);
    expect(() => zipfSampler(3, -1, Math.random)).toThrow(RangeError);
  });
});

import { describe, expect, it } from "vitest";
import { outboxDefaults, retryAfterFrom, retryAfterSecondsToMs } from "../src/index.js";

describe("retry_after is parsed strictly", () => {
  it.each([
    [0, 0],
    [3, 3_000],
    [1.5, 1_500],
    [0.0004, 1],
  ])("%s s is %i ms", (seconds, ms) => {
    expect(retryAfterSecondsToMs(seconds)).toBe(ms);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, "3", null, undefined, {}])(
    "%o is not a retry_after: the fallback applies",
    (value) => {
      expect(retryAfterSecondsToMs(value)).toBeUndefined();
      expect(
        retryAfterFrom({ ok: false, error_code: 429, parameters: { retry_after: value } })
          ?.retryAfterMs,
      ).toBe(outboxDefaults.defaultRetryAfterMs);
    },
  );
});

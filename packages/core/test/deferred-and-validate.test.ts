import { describe, expect, it } from "vitest";
import { abortReason, checkNumber, createDeferred, onAbort } from "../src/index.js";

describe("createDeferred", () => {
  it("resolves and rejects from outside", async () => {
    const ok = createDeferred<number>();
    ok.resolve(42);
    await expect(ok.promise).resolves.toBe(42);
    const bad = createDeferred<number>();
    bad.reject(new Error("no"));
    await expect(bad.promise).rejects.toThrow("no");
  });
});

describe("checkNumber", () => {
  it("returns valid values", () => {
    expect(checkNumber("n", 3, { integer: true, min: 1 })).toBe(3);
    expect(checkNumber("rate", 0.5, { greaterThan: 0 })).toBe(0.5);
  });

  it("words the error with the name, the rule and the value", () => {
    expect(() => checkNumber("maxInFlight", 0, { integer: true, min: 1 })).toThrow(
      new RangeError("Expected `maxInFlight` to be an integer >= 1, got 0"),
    );
    expect(() => checkNumber("rate", Number.NaN, { greaterThan: 0 })).toThrow(
      "Expected `rate` to be a finite number > 0, got NaN",
    );
    expect(() => checkNumber("n", 1.5, { integer: true })).toThrow(RangeError);
    expect(() => checkNumber("n", 11, { max: 10 })).toThrow("<= 10, got 11");
    expect(() => checkNumber("n", "3")).toThrow(
      new TypeError('Expected `n` to be a finite number, got "3"'),
    );
  });
});

describe("abort helpers", () => {
  it("subscribes once and unsubscribes", () => {
    const controller = new AbortController();
    let calls = 0;
    const off = onAbort(controller.signal, () => calls++);
    off();
    controller.abort();
    expect(calls).toBe(0);
    expect(onAbort(undefined, () => {})).toBeTypeOf("function");
  });

  it("gives the reason or an AbortError", () => {
    const reason = new Error("x");
    expect(abortReason(AbortSignal.abort(reason))).toBe(reason);
    const controller = new AbortController();
    Object.defineProperty(controller.signal, "reason", { value: undefined });
    expect(abortReason(controller.signal)).toMatchObject({ name: "AbortError" });
  });
});

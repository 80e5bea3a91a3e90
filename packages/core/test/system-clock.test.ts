import { describe, expect, it } from "vitest";
import { systemClock } from "../src/index.js";

// The only real-time test of the package: it checks the wiring to the real timers, not a schedule.
describe("systemClock", () => {
  it("is monotonic and its timers fire and cancel", async () => {
    const a = systemClock.now();
    await systemClock.sleep(1);
    expect(systemClock.now()).toBeGreaterThanOrEqual(a);
    let fired = false;
    systemClock
      .setTimer(() => {
        fired = true;
      }, 0)
      .cancel();
    await systemClock.sleep(5);
    expect(fired).toBe(false);
  });

  it("rejects an aborted sleep with the signal's reason", async () => {
    const controller = new AbortController();
    const sleep = systemClock.sleep(60_000, { signal: controller.signal });
    controller.abort(new Error("bye"));
    await expect(sleep).rejects.toThrow("bye");
  });

  it("gives a DOMException AbortError when aborted without a reason object", async () => {
    const signal = AbortSignal.abort();
    await expect(systemClock.sleep(10, { signal })).rejects.toMatchObject({ name: "AbortError" });
  });
});

import diagnosticsChannel from "node:diagnostics_channel";
import { describe, expect, it } from "vitest";
import { eventually, jainIndex, recordChannels, spyLogger } from "../src/index.js";

describe("eventually", () => {
  it("resolves once the check holds and rethrows its last failure on timeout", async () => {
    let calls = 0;
    await eventually("the third call", () => ++calls >= 3, { intervalMs: 1 });
    expect(calls).toBe(3);
    await expect(
      eventually(
        "never",
        () => {
          throw new Error("still not");
        },
        { timeoutMs: 10, intervalMs: 1 },
      ),
    ).rejects.toThrow("still not");
    await expect(eventually("never", () => false, { timeoutMs: 10 })).rejects.toThrow(
      "Timed out after 10 ms waiting until never",
    );
  });
});

describe("jainIndex", () => {
  it("is 1 for equal shares, 1/n when one takes all, NaN when nothing was served", () => {
    expect(jainIndex([3, 3, 3])).toBe(1);
    expect(jainIndex([9, 0, 0])).toBeCloseTo(1 / 3);
    expect(jainIndex([])).toBeNaN();
    expect(jainIndex([0, 0])).toBeNaN();
    expect(() => jainIndex([1, -1])).toThrow(RangeError);
  });
});

describe("recordChannels and spyLogger", () => {
  it("record events until stopped and log calls in order", () => {
    const name = "telepace:testing-test:event";
    const recorder = recordChannels<{ n: number }>({ event: name });
    diagnosticsChannel.channel(name).publish({ n: 1 });
    recorder.stop();
    diagnosticsChannel.channel(name).publish({ n: 2 });
    expect(recorder.events).toEqual([{ n: 1 }]);
    const logger = spyLogger();
    logger.warn({ updateId: 1 }, "failed");
    expect(logger.calls).toEqual([{ level: "warn", fields: { updateId: 1 }, message: "failed" }]);
    expect(logger.text()).toContain('failed {"updateId":1}');
  });
});

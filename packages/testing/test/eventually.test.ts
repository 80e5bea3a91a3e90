import { describe, expect, it } from "vitest";
import { eventually } from "../src/index.js";

describe("eventually", () => {
  it("resolves once the check holds, whether it returns true or stops throwing", async () => {
    let calls = 0;
    await eventually("the third call", () => ++calls >= 3, { intervalMs: 1 });
    expect(calls).toBe(3);
    let asserted = 0;
    await eventually("the second assertion", () => expect(++asserted).toBe(2), { intervalMs: 1 });
    expect(asserted).toBe(2);
  });

  it("waits for a check that answers with a promise (a query over real I/O)", async () => {
    let calls = 0;
    await eventually("the second answer", async () => ++calls >= 2, { intervalMs: 1 });
    expect(calls).toBe(2);
    await expect(
      eventually("never", async () => Promise.reject(new Error("no answer")), {
        timeoutMs: 10,
        intervalMs: 1,
      }),
    ).rejects.toThrow("no answer");
  });

  it("rethrows the check's last failure on timeout, or names what it waited for", async () => {
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

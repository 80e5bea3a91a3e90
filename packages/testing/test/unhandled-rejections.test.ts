import { describe, expect, it } from "vitest";
import { unhandledRejectionsOf } from "../src/index.js";

describe("unhandledRejectionsOf", () => {
  it("returns the rejections nobody handled while the body ran", async () => {
    const stray = new Error("stray");
    expect(
      await unhandledRejectionsOf(() => {
        void Promise.reject(stray);
        void Promise.reject(new Error("handled")).catch(() => {});
      }),
    ).toEqual([stray]);
    expect(await unhandledRejectionsOf(async () => {}, { settleMs: 0 })).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { spyLogger } from "../src/index.js";

describe("spyLogger", () => {
  it("records calls in order, and text() holds every one", () => {
    const logger = spyLogger();
    logger.warn({ updateId: 1 }, "failed");
    logger.debug({}, "done");
    expect(logger.calls).toEqual([
      { level: "warn", fields: { updateId: 1 }, message: "failed" },
      { level: "debug", fields: {}, message: "done" },
    ]);
    expect(logger.text()).toBe('warn failed {"updateId":1}\ndebug done {}');
  });

  it("answers each call as `answer` does, after recording it", async () => {
    const throwing = spyLogger({
      answer: (call) => {
        throw new Error(call.message);
      },
    });
    expect(() => throwing.info({}, "down")).toThrow("down");
    expect(throwing.calls).toHaveLength(1);
    const rejecting = spyLogger({ answer: () => Promise.reject(new Error("transport down")) });
    await expect(rejecting.error({}, "x")).rejects.toThrow("transport down");
  });
});

import { describe, expect, it } from "vitest";
import { OutboxError } from "../src/index.js";
import { setup } from "./support/setup.js";

describe("bounds", () => {
  it("at maxPending a new op is rejected with ERR_OUTBOX_FULL; a coalescing op still fits", async () => {
    const { clock, outbox, rec } = setup({ maxPending: 2 });
    outbox.enqueue({ chatId: 1, execute: rec.manual("in-flight") });
    await clock.flush();
    const a = outbox.enqueue({ chatId: 1, key: "a", execute: rec.scripted("a") });
    const b = outbox.enqueue({ chatId: 2, key: "b", execute: rec.manual("b") });
    await clock.flush();
    // b went in flight at once (another chat), so a is the only pending op.
    const c = outbox.enqueue({ chatId: 1, key: "c", execute: rec.scripted("c") });
    const d = outbox.enqueue({ chatId: 1, key: "d", execute: rec.scripted("d") });
    const outcome = await d;
    expect(outcome.status).toBe("rejected");
    const error = (outcome as { error: OutboxError }).error;
    expect(error).toBeInstanceOf(OutboxError);
    expect(error).toMatchObject({
      code: "ERR_OUTBOX_FULL",
      message: "The outbox is full (maxPending)",
    });
    const a2 = outbox.enqueue({ chatId: 1, key: "a", execute: rec.scripted("a2") });
    expect(await a).toMatchObject({ status: "superseded" });
    rec.last("in-flight").done.resolve(1);
    rec.last("b").done.resolve(1);
    expect((await a2).status).toBe("delivered");
    expect((await c).status).toBe("delivered");
    void b;
    expect(outbox.snapshot().counters.rejected).toBe(1);
  });

  it("maxPendingPerChat bounds one chat without affecting others", async () => {
    const { clock, outbox, rec } = setup({ maxPendingPerChat: 1 });
    outbox.enqueue({ chatId: 1, execute: rec.manual("in-flight") });
    await clock.flush();
    outbox.enqueue({ chatId: 1, execute: rec.scripted("queued") });
    const rejected = outbox.enqueue({ chatId: 1, execute: rec.scripted("rejected") });
    const other = outbox.enqueue({ chatId: 2, execute: rec.scripted("other") });
    expect(await rejected).toMatchObject({
      status: "rejected",
      error: { message: "The outbox is full (maxPendingPerChat)" },
    });
    expect((await other).status).toBe("delivered");
  });
});

describe("abort", () => {
  it("aborting a pending op removes it and rejects with signal.reason", async () => {
    const { clock, outbox, rec } = setup();
    outbox.enqueue({ chatId: 1, execute: rec.manual("blocker") });
    await clock.flush();
    const controller = new AbortController();
    const op = outbox.enqueue(
      { chatId: 1, execute: rec.scripted("aborted") },
      { signal: controller.signal },
    );
    const reason = new Error("user gave up");
    controller.abort(reason);
    await expect(op).rejects.toBe(reason);
    expect(outbox.snapshot().pending).toBe(0);
    rec.last("blocker").done.resolve(1);
    await clock.runAll();
    expect(rec.labels).toEqual(["blocker"]);
    expect(outbox.snapshot().counters.aborted).toBe(1);
  });

  it("aborting an in-flight op aborts its execute signal; the chat stays busy until it settles", async () => {
    const { clock, outbox, rec } = setup();
    const controller = new AbortController();
    const op = outbox.enqueue(
      { chatId: 1, execute: rec.manual("slow") },
      { signal: controller.signal },
    );
    await clock.flush();
    const next = outbox.enqueue({ chatId: 1, execute: rec.scripted("next") });
    controller.abort("stop");
    await expect(op).rejects.toBe("stop");
    expect(rec.last("slow").signal.aborted).toBe(true);
    await clock.flush();
    expect(rec.labels).toEqual(["slow"]);
    rec.last("slow").done.reject(rec.last("slow").signal.reason);
    expect((await next).status).toBe("delivered");
  });

  it("an already aborted signal rejects without queueing", async () => {
    const { outbox, rec } = setup();
    await expect(
      outbox.enqueue(
        { chatId: 1, execute: rec.scripted("x") },
        { signal: AbortSignal.abort("no") },
      ),
    ).rejects.toBe("no");
    expect(outbox.snapshot().pending).toBe(0);
  });

  it("the signal of a superseded op no longer affects the op that replaced it", async () => {
    const { clock, outbox, rec } = setup();
    outbox.enqueue({ chatId: 1, execute: rec.manual("blocker") });
    await clock.flush();
    const controller = new AbortController();
    const old = outbox.enqueue(
      { chatId: 1, key: "k", execute: rec.scripted("old") },
      { signal: controller.signal },
    );
    const fresh = outbox.enqueue({ chatId: 1, key: "k", execute: rec.scripted("new") });
    expect((await old).status).toBe("superseded");
    controller.abort();
    rec.last("blocker").done.resolve(1);
    expect((await fresh).status).toBe("delivered");
  });
});

describe("bad input", () => {
  it("a malformed op throws synchronously, naming what is wrong", () => {
    const { outbox } = setup();
    expect(() => outbox.enqueue({} as never)).toThrow(
      new TypeError("Expected `op` to be an object with an `execute` function"),
    );
    const execute = async () => 1;
    expect(() => outbox.enqueue({ execute, priority: -1 })).toThrow(
      new RangeError("Expected `priority` to be an integer >= 0, got -1"),
    );
    expect(() => outbox.enqueue({ execute, priority: 1.5 })).toThrow(RangeError);
    expect(() => outbox.enqueue({ execute, chatId: 1.5 })).toThrow(
      new RangeError("Expected `chatId` to be an integer or a string, got 1.5"),
    );
    expect(() => outbox.enqueue({ execute, chatId: "" })).toThrow(TypeError);
    expect(() => outbox.enqueue({ execute, key: 5 as never })).toThrow(
      new TypeError("Expected `key` to be a string, got number"),
    );
    expect(() => outbox.enqueue({ execute, paced: "no" as never })).toThrow(
      new TypeError("Expected `paced` to be a boolean, got string"),
    );
    expect(() => outbox.enqueue({ execute, idempotent: 1 as never })).toThrow(
      new TypeError("Expected `idempotent` to be a boolean, got number"),
    );
    expect(() => outbox.enqueue({ execute, supersedes: "edit:1" as never })).toThrow(
      new TypeError("Expected `supersedes` to be an array of strings"),
    );
    expect(() => outbox.enqueue({ execute, followUp: {} as never })).toThrow(
      new TypeError("Expected `followUp` to be a function, got object"),
    );
    expect(outbox.snapshot().pending).toBe(0);
  });
});

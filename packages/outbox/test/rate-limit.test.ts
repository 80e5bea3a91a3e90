import { describe, expect, it } from "vitest";
import { RetryAfterError, RetryAfterTooLongError } from "../src/index.js";
import { fail } from "./support/ops.js";
import { setup } from "./support/setup.js";

describe("429 scope and caps", () => {
  it("a 429 freezes only the chat it came from; other chats keep going", async () => {
    const { clock, outbox, rec } = setup();
    outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("1a", [fail(new RetryAfterError(10_000)), "ok"], 1),
    });
    await clock.flush();
    outbox.enqueue({ chatId: 1, execute: rec.scripted("1b", undefined, 1) });
    outbox.enqueue({ chatId: 2, execute: rec.scripted("2a", undefined, 2) });
    await clock.advance(5_000);
    outbox.enqueue({ chatId: 2, execute: rec.scripted("2b", undefined, 2) });
    await clock.advance(1);
    expect(rec.labels).toEqual(["1a", "2a", "2b"]);
    expect(outbox.snapshot().chats.find((c) => c.chat === "1")).toMatchObject({
      frozenForMs: 4_999,
      pending: 2,
    });
    await clock.advance(4_999);
    // The retried op keeps its place ahead of 1b.
    expect(rec.labels).toEqual(["1a", "2a", "2b", "1a", "1b"]);
  });

  it("a 429 on an op without a chat freezes every chat", async () => {
    const { clock, outbox, rec } = setup();
    outbox.enqueue({
      key: "me",
      execute: rec.scripted("no-chat", [fail(new RetryAfterError(3_000)), "ok"]),
    });
    await clock.flush();
    outbox.enqueue({ chatId: 1, execute: rec.scripted("chat1") });
    outbox.enqueue({ chatId: 2, execute: rec.scripted("chat2") });
    await clock.advance(2_999);
    expect(rec.labels).toEqual(["no-chat"]);
    expect(outbox.snapshot().globalFrozenForMs).toBe(1);
    await clock.advance(1);
    expect(rec.labels.sort()).toEqual(["chat1", "chat2", "no-chat", "no-chat"]);
  });

  it("a retry_after above maxRetryAfterMs fails the op and the chat's other pending ops", async () => {
    const { clock, outbox, rec } = setup({ maxRetryAfterMs: 60_000 });
    const first = outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("a", [fail(new RetryAfterError(3_600_000))]),
    });
    await clock.flush();
    const second = outbox.enqueue({ chatId: 1, execute: rec.scripted("b") });
    const other = outbox.enqueue({ chatId: 2, execute: rec.scripted("other") });
    const outcome = await first;
    expect(outcome).toMatchObject({ status: "failed", attempts: 1, maybeDelivered: false });
    const error = (outcome as { error: RetryAfterTooLongError }).error;
    expect(error).toBeInstanceOf(RetryAfterTooLongError);
    expect(error).toMatchObject({
      code: "ERR_RETRY_AFTER_TOO_LONG",
      retryAfterMs: 3_600_000,
      maxRetryAfterMs: 60_000,
    });
    expect(error.cause).toBeInstanceOf(RetryAfterError);
    expect(await second).toMatchObject({
      status: "failed",
      error: { code: "ERR_RETRY_AFTER_TOO_LONG" },
    });
    expect((await other).status).toBe("delivered");
    // The chat stays frozen: a new op to it fails fast instead of waiting an hour.
    const late = outbox.enqueue({ chatId: 1, execute: rec.scripted("late") });
    expect(await late).toMatchObject({
      status: "failed",
      error: { code: "ERR_RETRY_AFTER_TOO_LONG" },
    });
    expect(rec.labels).toEqual(["a", "other"]);
  });

  it("a chat-less 429 above the cap fails every pending op instead of stalling the outbox", async () => {
    const { clock, outbox, rec } = setup({ maxRetryAfterMs: 1_000 });
    const noChat = outbox.enqueue({ key: "me", execute: rec.manual("no-chat") });
    const inFlight = outbox.enqueue({ chatId: 1, execute: rec.manual("c1") });
    await clock.flush();
    const queued = [1, 2].map((n) =>
      outbox.enqueue({ chatId: 1, execute: rec.scripted(`queued${n}`) }),
    );
    rec.last("no-chat").done.reject(new RetryAfterError(10_000));
    expect(await noChat).toMatchObject({
      status: "failed",
      error: { code: "ERR_RETRY_AFTER_TOO_LONG" },
    });
    for (const outcome of await Promise.all(queued)) {
      expect(outcome).toMatchObject({
        status: "failed",
        error: { code: "ERR_RETRY_AFTER_TOO_LONG" },
      });
    }
    // A request already in flight is not touched.
    rec.last("c1").done.resolve("ok");
    expect((await inFlight).status).toBe("delivered");
    expect(rec.labels).toEqual(["no-chat", "c1"]);
  });

  it("a 429 envelope returned (not thrown) by execute is treated as a 429", async () => {
    const { clock, outbox, rec } = setup();
    const envelope = {
      ok: false,
      error_code: 429,
      description: "Too Many Requests: retry after 2",
      parameters: { retry_after: 2 },
    };
    const op = outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("x", [envelope, { ok: true, result: 7 }]),
    });
    await clock.advance(1_999);
    expect(rec.calls).toHaveLength(1);
    await clock.advance(1);
    expect(await op).toMatchObject({
      status: "delivered",
      result: { ok: true, result: 7 },
      attempts: 2,
    });
  });

  it("an error shaped like grammY's GrammyError (error_code 429, parameters) is a 429", async () => {
    const { clock, outbox, rec } = setup();
    const grammyLike = Object.assign(
      new Error("Call to 'sendMessage' failed! (429: Too Many Requests)"),
      {
        ok: false,
        error_code: 429,
        description: "Too Many Requests: retry after 1",
        parameters: { retry_after: 1 },
        method: "sendMessage",
      },
    );
    const op = outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("x", [fail(grammyLike), "sent"]),
    });
    await clock.advance(1_000);
    expect(await op).toMatchObject({ status: "delivered", result: "sent", attempts: 2 });
  });

  it("gives up after maxAttempts with the last error", async () => {
    const { clock, outbox, rec } = setup({ maxAttempts: 3 });
    const error = new RetryAfterError(100);
    const op = outbox.enqueue({ chatId: 1, execute: rec.scripted("x", [fail(error)]) });
    await clock.advance(1_000);
    expect(await op).toEqual({ status: "failed", error, attempts: 3, maybeDelivered: false });
    expect(rec.calls).toHaveLength(3);
  });
});

import { describe, expect, it } from "vitest";
import { OutboxError, RetryAfterError } from "../src/index.js";
import { fail } from "./support/ops.js";
import { setup } from "./support/setup.js";

describe("close", () => {
  it("drains by default: pending ops are still sent, paced as usual", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1 });
    const ops = [1, 2, 3].map((n) => outbox.enqueue({ chatId: 1, execute: rec.scripted(`m${n}`) }));
    await clock.flush();
    let closed = false;
    const closing = outbox.close().then(() => {
      closed = true;
    });
    expect(outbox.isClosed).toBe(true);
    expect(outbox.snapshot().state).toBe("closing");
    await clock.advance(1_999);
    expect(closed).toBe(false);
    await clock.advance(1);
    await closing;
    expect((await Promise.all(ops)).map((o) => o.status)).toEqual([
      "delivered",
      "delivered",
      "delivered",
    ]);
    expect(outbox.snapshot().state).toBe("closed");
  });

  it("refuses new ops while draining (closed outcome)", async () => {
    const { clock, outbox, rec } = setup();
    outbox.enqueue({ chatId: 1, execute: rec.manual("a") });
    await clock.flush();
    const closing = outbox.close();
    expect(await outbox.enqueue({ chatId: 1, execute: rec.scripted("late") })).toMatchObject({
      status: "closed",
    });
    rec.last("a").done.resolve(1);
    await closing;
  });

  it("at the deadline, pending ops settle closed and in-flight requests are aborted and settle closed", async () => {
    const { clock, outbox, rec } = setup();
    const inFlight = outbox.enqueue({ chatId: 1, execute: rec.manual("stuck") });
    const frozen = outbox.enqueue({
      chatId: 2,
      execute: rec.scripted("frozen", [fail(new RetryAfterError(60_000))]),
    });
    await clock.flush();
    const closing = outbox.close({ timeoutMs: 5_000 });
    await clock.advance(5_000);
    await closing;
    expect(await inFlight).toEqual({ status: "closed", attempts: 1 });
    expect(await frozen).toEqual({ status: "closed", attempts: 1 });
    const signal = rec.last("stuck").signal;
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(OutboxError);
    expect(signal.reason).toMatchObject({ code: "ERR_OUTBOX_CLOSED" });
    // The late answer of the aborted request changes nothing.
    rec.last("stuck").done.resolve("late");
    await clock.flush();
    expect(outbox.snapshot().counters).toMatchObject({ closed: 2, delivered: 0 });
  });

  it("without drain, an in-flight op that gets a 429 settles closed instead of requeueing", async () => {
    const { clock, outbox, rec } = setup();
    const op = outbox.enqueue({ chatId: 1, execute: rec.manual("a") });
    await clock.flush();
    const closing = outbox.close({ drain: false });
    rec.last("a").done.reject(new RetryAfterError(1_000));
    expect(await op).toEqual({ status: "closed", attempts: 1 });
    await closing;
  });

  it("while draining, a 429 requeues and the retry still runs before the deadline", async () => {
    const { clock, outbox, rec } = setup();
    const op = outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("a", [fail(new RetryAfterError(1_000)), "ok"]),
    });
    await clock.flush();
    const closing = outbox.close({ timeoutMs: 5_000 });
    await clock.advance(1_000);
    await closing;
    expect(await op).toMatchObject({ status: "delivered", attempts: 2 });
  });

  it("is idempotent, resolves at once when idle, and works with await using", async () => {
    const { outbox } = setup();
    const first = outbox.close();
    expect(outbox.close({ drain: false })).toBe(first);
    await first;
    const { outbox: disposed, clock, rec } = setup();
    {
      await using scoped = disposed;
      scoped.enqueue({ chatId: 1, execute: rec.scripted("x") });
      await clock.flush();
    }
    expect(disposed.snapshot().state).toBe("closed");
  });

  it("validates its options", () => {
    const { outbox } = setup();
    expect(() => outbox.close({ timeoutMs: -1 })).toThrow(
      new RangeError("Expected `timeoutMs` to be a finite number >= 0, got -1"),
    );
    expect(() => outbox.close({ drain: "yes" as never })).toThrow(
      new TypeError('Expected `drain` to be a boolean, got "yes"'),
    );
    expect(outbox.isClosed).toBe(false);
  });
});

describe("followUp", () => {
  it("enqueues the follow-up only after delivery, even while draining", async () => {
    const { clock, outbox, rec } = setup();
    const send = outbox.enqueue({
      chatId: 1,
      execute: rec.manual("send"),
      followUp: (result) => ({
        chatId: 1,
        key: "delete:1",
        execute: rec.scripted(`delete after ${String(result)}`),
      }),
    });
    await clock.flush();
    const closing = outbox.close();
    rec.last("send").done.resolve("msg");
    const outcome = await send;
    expect(outcome.status).toBe("delivered");
    const followUp = (outcome as { followUp?: Promise<unknown> }).followUp;
    expect(await followUp).toMatchObject({ status: "delivered" });
    await closing;
    expect(rec.labels).toEqual(["send", "delete after msg"]);
  });

  it("a follow-up that drops the chat's only pending op keeps the chat in one lane", async () => {
    const { clock, outbox, rec } = setup({ maxInFlight: 3 });
    outbox.enqueue({
      chatId: 1,
      key: "replace:10",
      execute: rec.manual("final"),
      followUp: () => ({
        chatId: 1,
        key: "delete:10",
        supersedes: ["edit:10"],
        execute: rec.manual("delete"),
      }),
    });
    await clock.flush();
    // A late progress edit arrives while the final message is in flight.
    const late = outbox.enqueue({
      chatId: 1,
      key: "edit:10",
      priority: 2,
      execute: rec.scripted("late edit"),
    });
    rec.last("final").done.resolve("sent");
    await clock.flush();
    expect(await late).toMatchObject({ status: "superseded", reason: "dropped" });
    expect(rec.labels).toEqual(["final", "delete"]);
    outbox.enqueue({ chatId: 1, execute: rec.manual("next") });
    await clock.flush();
    // The delete is still in flight: the next request to the chat waits for it.
    expect(rec.labels).toEqual(["final", "delete"]);
    expect(outbox.snapshot().chats).toMatchObject([{ chat: "1", pending: 1, inFlight: true }]);
    rec.last("delete").done.resolve(true);
    await clock.flush();
    expect(rec.labels).toEqual(["final", "delete", "next"]);
  });

  it("without drain, a follow-up settles closed instead of being sent", async () => {
    const { clock, outbox, rec } = setup();
    const send = outbox.enqueue({
      chatId: 1,
      execute: rec.manual("send"),
      followUp: () => ({ chatId: 1, execute: rec.scripted("delete") }),
    });
    await clock.flush();
    const closing = outbox.close({ drain: false });
    rec.last("send").done.resolve("msg");
    const outcome = await send;
    expect(await (outcome as { followUp?: Promise<unknown> }).followUp).toEqual({
      status: "closed",
      attempts: 0,
    });
    await closing;
    expect(rec.labels).toEqual(["send"]);
  });

  it("no follow-up when the op fails", async () => {
    const { clock, outbox, rec } = setup();
    const send = outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("send", [fail(new Error("nope"))]),
      followUp: () => ({ chatId: 1, execute: rec.scripted("never") }),
    });
    await clock.flush();
    expect((await send).status).toBe("failed");
    await clock.runAll();
    expect(rec.labels).toEqual(["send"]);
  });

  it("a follow-up callback that throws yields a failed follow-up outcome, the op stays delivered", async () => {
    const { clock, outbox, rec } = setup();
    const bug = new Error("bug");
    const send = outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("send"),
      followUp: () => {
        throw bug;
      },
    });
    await clock.flush();
    const outcome = await send;
    expect(outcome.status).toBe("delivered");
    expect(await (outcome as { followUp?: Promise<unknown> }).followUp).toMatchObject({
      status: "failed",
      error: bug,
    });
  });
});

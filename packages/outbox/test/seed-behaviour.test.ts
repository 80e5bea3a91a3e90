import { describe, expect, it } from "vitest";
import { Priority, RetryAfterError } from "../src/index.js";
import { fail } from "./support/ops.js";
import { setup } from "./support/setup.js";

describe("seed: coalescing", () => {
  it("edits to one message coalesce to the latest while the first is in flight", async () => {
    const { clock, outbox, rec } = setup();
    const edit = (text: string) =>
      outbox.enqueue({
        chatId: 1,
        key: "edit:10",
        priority: Priority.edit,
        execute: rec.manual(text),
      });
    const first = edit("first");
    await clock.flush();
    expect(rec.labels).toEqual(["first"]);
    const second = edit("second");
    const third = edit("third");
    rec.last("first").done.resolve("r1");
    await clock.flush();
    rec.last("third").done.resolve("r3");
    expect(await first).toMatchObject({ status: "delivered", result: "r1" });
    expect(await second).toEqual({ status: "superseded", reason: "coalesced", attempts: 0 });
    expect(await third).toMatchObject({ status: "delivered", result: "r3", attempts: 1 });
    expect(rec.labels).toEqual(["first", "third"]);
    expect(outbox.snapshot().counters).toMatchObject({ coalesced: 1, superseded: 1, executed: 2 });
  });

  it("a newer op with the same key keeps the older op's queued_at (its place in line)", async () => {
    const { clock, outbox, rec } = setup();
    const blocker = outbox.enqueue({ chatId: 1, execute: rec.manual("blocker") });
    await clock.flush();
    outbox.enqueue({ chatId: 1, key: "a", priority: Priority.edit, execute: rec.manual("a1") });
    await clock.advance(10);
    outbox.enqueue({ chatId: 1, key: "b", priority: Priority.edit, execute: rec.scripted("b") });
    await clock.advance(10);
    const a2 = outbox.enqueue({
      chatId: 1,
      key: "a",
      priority: Priority.edit,
      execute: rec.scripted("a2"),
    });
    rec.last("blocker").done.resolve(true);
    await blocker;
    await a2;
    await clock.runAll();
    // a2 was enqueued after b but runs before it: it inherited a1's queued_at.
    expect(rec.labels).toEqual(["blocker", "a2", "b"]);
  });

  it("an op without a key is never coalesced (plain sends are unique)", async () => {
    const { clock, outbox, rec } = setup();
    const results = [1, 2, 3].map((n) =>
      outbox.enqueue({ chatId: 1, execute: rec.scripted(`send${n}`) }),
    );
    await clock.runAll();
    expect((await Promise.all(results)).map((o) => o.status)).toEqual([
      "delivered",
      "delivered",
      "delivered",
    ]);
    expect(rec.labels).toEqual(["send1", "send2", "send3"]);
  });

  it("keys include the chat: the same key in two chats does not coalesce", async () => {
    const { clock, outbox, rec } = setup();
    const a = outbox.enqueue({ chatId: 1, key: "edit:5", execute: rec.scripted("chat1") });
    const b = outbox.enqueue({ chatId: 2, key: "edit:5", execute: rec.scripted("chat2") });
    await clock.runAll();
    expect((await a).status).toBe("delivered");
    expect((await b).status).toBe("delivered");
    expect(rec.labels.sort()).toEqual(["chat1", "chat2"]);
  });
});

describe("seed: priority order", () => {
  it("a send pre-empts a pending edit (edit in flight, then send, then the pending edit)", async () => {
    const { clock, outbox, rec } = setup();
    outbox.enqueue({
      chatId: 1,
      key: "edit:1",
      priority: Priority.edit,
      execute: rec.manual("edit1"),
    });
    await clock.flush();
    const pendingEdit = outbox.enqueue({
      chatId: 1,
      key: "edit:2",
      priority: Priority.edit,
      execute: rec.scripted("edit2"),
    });
    const send = outbox.enqueue({
      chatId: 1,
      priority: Priority.send,
      execute: rec.scripted("send"),
    });
    rec.last("edit1").done.resolve(true);
    await send;
    await pendingEdit;
    expect(rec.labels).toEqual(["edit1", "send", "edit2"]);
  });

  it("orders by (priority, queued_at): send=0 before delete=1 before edit=2, FIFO within a tier", async () => {
    const { clock, outbox, rec } = setup();
    outbox.enqueue({ chatId: 1, execute: rec.manual("blocker") });
    await clock.flush();
    const ops: [string, number][] = [
      ["edit-a", Priority.edit],
      ["delete-a", Priority.delete],
      ["send-a", Priority.send],
      ["edit-b", Priority.edit],
      ["send-b", Priority.send],
      ["delete-b", Priority.delete],
    ];
    const done = ops.map(([label, priority]) =>
      outbox.enqueue({ chatId: 1, key: label, priority, execute: rec.scripted(label) }),
    );
    rec.last("blocker").done.resolve(true);
    await Promise.all(done);
    expect(rec.labels).toEqual([
      "blocker",
      "send-a",
      "send-b",
      "delete-a",
      "delete-b",
      "edit-a",
      "edit-b",
    ]);
  });
});

describe("seed: a delete drops pending edits", () => {
  it("an op listing the edit's key in `supersedes` drops it (only the in-flight edit ran)", async () => {
    const { clock, outbox, rec } = setup();
    outbox.enqueue({
      chatId: 1,
      key: "edit:7",
      priority: Priority.edit,
      execute: rec.manual("first"),
    });
    await clock.flush();
    const second = outbox.enqueue({
      chatId: 1,
      key: "edit:7",
      priority: Priority.edit,
      execute: rec.scripted("second"),
    });
    const del = outbox.enqueue({
      chatId: 1,
      key: "delete:7",
      priority: Priority.delete,
      supersedes: ["edit:7"],
      execute: rec.scripted("delete"),
    });
    expect(await second).toEqual({ status: "superseded", reason: "dropped", attempts: 0 });
    rec.last("first").done.resolve(true);
    expect((await del).status).toBe("delivered");
    expect(rec.labels).toEqual(["first", "delete"]);
  });

  it("a delete that drops the chat's only pending op still shares the chat's lane with later ops", async () => {
    const { clock, outbox, rec } = setup({ maxInFlight: 2 });
    outbox.enqueue({ chatId: 8, execute: rec.manual("blocker8") });
    outbox.enqueue({ chatId: 9, execute: rec.manual("blocker9") });
    await clock.flush();
    outbox.enqueue({
      chatId: 1,
      key: "edit:7",
      priority: Priority.edit,
      execute: rec.scripted("edit"),
    });
    outbox.enqueue({
      chatId: 1,
      key: "delete:7",
      priority: Priority.delete,
      supersedes: ["edit:7"],
      execute: rec.manual("delete"),
    });
    outbox.enqueue({ chatId: 1, execute: rec.manual("send") });
    expect(outbox.snapshot().chats.filter((c) => c.chat === "1")).toHaveLength(1);
    rec.last("blocker8").done.resolve(1);
    rec.last("blocker9").done.resolve(1);
    await clock.flush();
    // Two free slots, but one chat never has two requests in flight.
    expect(rec.labels).toEqual(["blocker8", "blocker9", "send"]);
    rec.last("send").done.resolve(1);
    await clock.flush();
    expect(rec.labels).toEqual(["blocker8", "blocker9", "send", "delete"]);
  });

  it("dropPending drops a pending op by chat and key and reports whether there was one", async () => {
    const { clock, outbox, rec } = setup();
    outbox.enqueue({ chatId: 1, execute: rec.manual("blocker") });
    await clock.flush();
    const edit = outbox.enqueue({ chatId: "1", key: "edit:1", execute: rec.scripted("edit") });
    expect(outbox.dropPending(1, "edit:1")).toBe(true);
    expect(outbox.dropPending(1, "edit:1")).toBe(false);
    expect(await edit).toMatchObject({ status: "superseded", reason: "dropped" });
  });
});

describe("seed: 429", () => {
  it("requeues after retry_after and keeps the op's place", async () => {
    const { clock, outbox, rec } = setup();
    const edit = outbox.enqueue({
      chatId: 1,
      key: "edit:1",
      priority: Priority.edit,
      execute: rec.scripted("edit", [fail(new RetryAfterError(2_000)), "ok"]),
    });
    await clock.flush();
    const later = outbox.enqueue({
      chatId: 1,
      key: "edit:2",
      priority: Priority.edit,
      execute: rec.scripted("later"),
    });
    await clock.advance(1_999);
    expect(rec.labels).toEqual(["edit"]);
    await clock.advance(1);
    expect(rec.labels).toEqual(["edit", "edit", "later"]);
    expect(await edit).toEqual({
      status: "delivered",
      result: "ok",
      notModified: false,
      attempts: 2,
    });
    expect((await later).status).toBe("delivered");
    expect(outbox.snapshot().counters).toMatchObject({ rateLimited: 1, retries: 1 });
  });

  it("uses 5 s when the 429 carries no retry_after", async () => {
    const { clock, outbox, rec } = setup();
    const envelope = { ok: false, error_code: 429, description: "Too Many Requests" };
    const send = outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("send", [fail(envelope), "ok"]),
    });
    await clock.advance(4_999);
    expect(rec.calls).toHaveLength(1);
    await clock.advance(1);
    expect(rec.calls).toHaveLength(2);
    expect((await send).status).toBe("delivered");
  });

  it("an op superseded while waiting for its retry is not retried", async () => {
    const { clock, outbox, rec } = setup();
    const old = outbox.enqueue({
      chatId: 1,
      key: "edit:1",
      priority: Priority.edit,
      execute: rec.scripted("old", [fail(new RetryAfterError(1_000))]),
    });
    await clock.flush();
    const newer = outbox.enqueue({
      chatId: 1,
      key: "edit:1",
      priority: Priority.edit,
      execute: rec.scripted("new"),
    });
    expect(await old).toEqual({ status: "superseded", reason: "coalesced", attempts: 1 });
    await clock.advance(1_000);
    expect(rec.labels).toEqual(["old", "new"]);
    expect((await newer).status).toBe("delivered");
  });

  it("an op whose key got a newer pending op during the 429 is dropped, not requeued", async () => {
    const { clock, outbox, rec } = setup();
    const old = outbox.enqueue({ chatId: 1, key: "k", execute: rec.manual("old") });
    await clock.flush();
    const newer = outbox.enqueue({ chatId: 1, key: "k", execute: rec.scripted("new") });
    rec.last("old").done.reject(new RetryAfterError(500));
    expect(await old).toMatchObject({ status: "superseded", reason: "coalesced", attempts: 1 });
    await clock.advance(500);
    expect(rec.labels).toEqual(["old", "new"]);
    expect((await newer).status).toBe("delivered");
  });
});

describe("seed: pacing with one chat", () => {
  it("private chats: one request per second from each start; 0 rps turns pacing off", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1 });
    for (const n of [1, 2, 3]) outbox.enqueue({ chatId: 5, execute: rec.scripted(`m${n}`) });
    await clock.advance(2_500);
    expect(rec.calls.map((c) => c.startedAt)).toEqual([0, 1_000, 2_000]);
  });

  it("groups: 20 per minute, one request every 3 s with `groupBurst: 1` (no margin)", async () => {
    const { clock, outbox, rec } = setup({ groupChatRps: 20 / 60, groupBurst: 1 });
    for (const n of [1, 2, 3]) outbox.enqueue({ chatId: -100, execute: rec.scripted(`m${n}`) });
    await clock.advance(10_000);
    expect(rec.calls.map((c) => c.startedAt)).toEqual([0, 3_000, 6_000]);
  });

  it("waits until max(next_at, retry_at)", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1 });
    outbox.enqueue({
      chatId: 5,
      execute: rec.scripted("a", [fail(new RetryAfterError(300)), "ok"]),
    });
    await clock.advance(5_000);
    // retry_at (300) is before next_at (1000): the retry waits for the pacing slot.
    expect(rec.calls.map((c) => c.startedAt)).toEqual([0, 1_000]);
    outbox.enqueue({
      chatId: 5,
      execute: rec.scripted("b", [fail(new RetryAfterError(2_500)), "ok"]),
    });
    await clock.advance(10_000);
    // retry_at (5000 + 2500) is after next_at (6000).
    expect(rec.calls.map((c) => c.startedAt)).toEqual([0, 1_000, 5_000, 7_500]);
  });
});

describe("seed: close", () => {
  it("close without drain fails pending ops at once with a closed outcome", async () => {
    const { clock, outbox, rec } = setup();
    const inFlight = outbox.enqueue({ chatId: 1, execute: rec.manual("in-flight") });
    await clock.flush();
    const pending = outbox.enqueue({ chatId: 1, execute: rec.scripted("pending") });
    const closing = outbox.close({ drain: false });
    expect(await pending).toEqual({ status: "closed", attempts: 0 });
    // The seed lets the in-flight op complete.
    rec.last("in-flight").done.resolve("done");
    expect(await inFlight).toMatchObject({ status: "delivered", result: "done" });
    await closing;
    expect(rec.labels).toEqual(["in-flight"]);
  });

  it("enqueue after close resolves closed and never throws", async () => {
    const { outbox, rec } = setup();
    await outbox.close();
    expect(await outbox.enqueue({ chatId: 1, execute: rec.scripted("late") })).toEqual({
      status: "closed",
      attempts: 0,
    });
    expect(rec.calls).toHaveLength(0);
  });
});

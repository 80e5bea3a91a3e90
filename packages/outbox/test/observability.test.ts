import { recordChannels, spyLogger } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { type OutboxEvent, outboxChannels, Priority, RetryAfterError } from "../src/index.js";
import { fail } from "./support/ops.js";
import { setup } from "./support/setup.js";

describe("snapshot", () => {
  it("shows pending by priority and chat, per-chat next and frozen times, and counters", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1 });
    outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("a", [fail(new RetryAfterError(4_000)), "ok"]),
    });
    outbox.enqueue({ chatId: 2, execute: rec.scripted("b") });
    await clock.flush();
    outbox.enqueue({
      chatId: 2,
      key: "edit:1",
      priority: Priority.edit,
      execute: rec.scripted("c"),
    });
    outbox.enqueue({
      chatId: 2,
      key: "edit:2",
      priority: Priority.edit,
      execute: rec.scripted("d"),
    });
    outbox.enqueue({
      chatId: 2,
      key: "delete:1",
      priority: Priority.delete,
      execute: rec.scripted("e"),
    });
    await clock.advance(250);
    const snapshot = outbox.snapshot();
    expect(Object.isFrozen(snapshot)).toBe(true);
    expect(Object.isFrozen(snapshot.chats)).toBe(true);
    expect(snapshot).toMatchObject({
      state: "open",
      pending: 4,
      inFlight: 0,
      pendingByPriority: { 0: 1, 1: 1, 2: 2 },
      globalFrozenForMs: 0,
    });
    expect(snapshot.chats).toEqual([
      {
        chat: "2",
        pending: 3,
        pendingByPriority: { 1: 1, 2: 2 },
        inFlight: false,
        nextSlotInMs: 750,
        frozenForMs: 0,
        backoffForMs: 0,
      },
      {
        chat: "1",
        pending: 1,
        pendingByPriority: { 0: 1 },
        inFlight: false,
        nextSlotInMs: 750,
        frozenForMs: 3_750,
        backoffForMs: 0,
      },
    ]);
    expect(snapshot.counters).toEqual({
      enqueued: 5,
      coalesced: 0,
      superseded: 0,
      executed: 2,
      delivered: 1,
      notModified: 0,
      rateLimited: 1,
      retries: 1,
      failed: 0,
      closed: 0,
      rejected: 0,
      aborted: 0,
      pacingStoreFailures: 0,
    });
    // A fresh object each time; counters never go backwards.
    await clock.runAll();
    const later = outbox.snapshot();
    expect(later).not.toBe(snapshot);
    expect(later.counters.executed).toBeGreaterThan(snapshot.counters.executed);
  });
});

describe("diagnostics_channel events", () => {
  it("publishes the lifecycle of ops on telepace:outbox:<event> without payloads", async () => {
    using recorder = recordChannels<OutboxEvent>(outboxChannels);
    const { events } = recorder;
    const { clock, outbox, rec } = setup();
    outbox.enqueue({
      chatId: 1,
      key: "edit:1",
      priority: Priority.edit,
      execute: rec.manual("first"),
    });
    await clock.flush();
    outbox.enqueue({
      chatId: 1,
      key: "edit:1",
      priority: Priority.edit,
      execute: rec.scripted("second"),
    });
    outbox.enqueue({
      chatId: 1,
      key: "edit:1",
      priority: Priority.edit,
      execute: rec.scripted("third", [fail(new RetryAfterError(100)), "ok"]),
    });
    rec.last("first").done.resolve("secret text");
    await clock.advance(100);
    expect(events.map((e) => e.type)).toEqual([
      "enqueued",
      "started",
      "enqueued",
      "superseded",
      "settled",
      "coalesced",
      "settled",
      "started",
      "rate-limited",
      "retry-scheduled",
      "started",
      "settled",
    ]);
    expect(events.find((e) => e.type === "rate-limited")).toEqual({
      type: "rate-limited",
      key: "edit:1",
      chat: "1",
      retryAfterMs: 100,
      scope: "chat",
    });
    expect(events.at(-1)).toEqual({
      type: "settled",
      key: "edit:1",
      chat: "1",
      status: "delivered",
      attempts: 2,
      error: undefined,
    });
    expect(JSON.stringify(events)).not.toContain("secret text");
    expect(events.every((e) => Object.isFrozen(e))).toBe(true);
  });

  it("gives each start the time since the op's enqueue on the outbox's clock", async () => {
    using recorder = recordChannels<OutboxEvent>(outboxChannels);
    const { clock, outbox, rec } = setup({ privateChatRps: 1 });
    outbox.enqueue({ chatId: 1, execute: rec.scripted("a") });
    await clock.advance(300);
    outbox.enqueue({
      chatId: 1,
      key: "edit:1",
      priority: Priority.edit,
      execute: rec.scripted("b"),
    });
    await clock.advance(200);
    // Coalesced 500 ms after its predecessor's enqueue: it keeps that place, and that time.
    outbox.enqueue({
      chatId: 1,
      key: "edit:1",
      priority: Priority.edit,
      execute: rec.scripted("c"),
    });
    outbox.enqueue({
      chatId: 2,
      execute: rec.scripted("d", [fail(new RetryAfterError(2_000)), "ok"]),
    });
    await clock.advance(3_000);
    const starts = recorder.events.flatMap((e) =>
      e.type === "started" ? [[e.chat, e.key, e.attempt, e.waitedMs]] : [],
    );
    expect(starts).toEqual([
      ["1", undefined, 1, 0],
      ["2", undefined, 1, 0],
      // Chat 1's next slot is a second after its first start: 700 ms after the edit's enqueue.
      ["1", "edit:1", 1, 700],
      // The retry counts from the first enqueue: 2 s of freeze after a start at 500 ms.
      ["2", undefined, 2, 2_000],
    ]);
  });

  it("names every channel telepace:outbox:<event>", () => {
    for (const [type, name] of Object.entries(outboxChannels))
      expect(name).toBe(`telepace:outbox:${type}`);
  });
});

describe("logger", () => {
  it("logs 429s, failures and rejections through the injected logger only", async () => {
    const logger = spyLogger();
    const { clock, outbox, rec } = setup({ logger, maxPending: 1 });
    outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("a", [fail(new RetryAfterError(100)), fail(new Error("boom"))]),
    });
    outbox.enqueue({ chatId: 1, execute: rec.scripted("b") });
    await clock.advance(100);
    const warnings = logger.calls.filter((l) => l.level === "warn").map((l) => l.message);
    expect(warnings).toEqual(["outbox full: op rejected", "rate limited (429)", "op failed"]);
    expect(logger.calls.find((l) => l.message === "op failed")?.fields).toMatchObject({
      chat: "1",
      attempts: 2,
      error: "Error",
    });
  });
});

import diagnosticsChannel from "node:diagnostics_channel";
import { ManualClock } from "@telepace/core";
import { RetryAfterError, TelegramOutbox, type TelegramOutboxOptions } from "@telepace/outbox";
import { describe, expect, it } from "vitest";
import { instrumentTelepace } from "../src/index.js";
import { gate } from "./support/gate.js";
import { meterHarness } from "./support/metric-reader.js";

const ok = () => Promise.resolve("ok");

function setup(options: TelegramOutboxOptions = {}, maxPerChatSeries = 0) {
  const clock = new ManualClock();
  const outbox = new TelegramOutbox({
    clock,
    privateChatRps: 0,
    groupChatRps: 0,
    globalRps: 0,
    pacingMarginMs: 0,
    ...options,
  });
  const harness = meterHarness();
  const metrics = instrumentTelepace({ meter: harness.meter, outbox, clock, maxPerChatSeries });
  return { clock, outbox, metrics, ...harness };
}

const kind = (value: string) => ({ "telepace.chat.kind": value });

describe("outbox gauges", () => {
  it("reports queue depth and requests in flight by chat kind", async () => {
    const { clock, outbox, collect, metrics } = setup();
    const blocked = gate();
    for (let i = 0; i < 3; i++) void outbox.enqueue({ chatId: 7, execute: blocked.op() });
    for (let i = 0; i < 2; i++) void outbox.enqueue({ chatId: -5, execute: blocked.op() });
    for (let i = 0; i < 4; i++) void outbox.enqueue({ chatId: "-1001", execute: blocked.op() });
    void outbox.enqueue({ chatId: "@news", execute: blocked.op() });
    await clock.flush();

    const collected = await collect();
    expect(collected.value("telepace.outbox.queue.depth", kind("private"))).toBe(2);
    expect(collected.value("telepace.outbox.queue.depth", kind("group"))).toBe(1);
    expect(collected.value("telepace.outbox.queue.depth", kind("supergroup"))).toBe(3);
    expect(collected.value("telepace.outbox.queue.depth", kind("none"))).toBe(0);
    expect(collected.value("telepace.outbox.in_flight", kind("private"))).toBe(1);
    expect(collected.value("telepace.outbox.in_flight", kind("group"))).toBe(1);
    expect(collected.value("telepace.outbox.in_flight", kind("supergroup"))).toBe(2);
    expect(collected.value("telepace.outbox.ops.enqueued")).toBe(10);
    expect(collected.value("telepace.outbox.requests")).toBe(4);

    blocked.open();
    await clock.runAll();
    const drained = await collect();
    expect(drained.value("telepace.outbox.queue.depth", kind("supergroup"))).toBe(0);
    expect(drained.value("telepace.outbox.ops.settled", { "telepace.outcome": "delivered" })).toBe(
      10,
    );
    metrics.stop();
  });

  it("reports the busiest chats one by one only up to maxPerChatSeries", async () => {
    const { clock, outbox, collect } = setup({}, 1);
    const blocked = gate();
    for (let i = 0; i < 4; i++) void outbox.enqueue({ chatId: 7, execute: blocked.op() });
    for (let i = 0; i < 3; i++) void outbox.enqueue({ chatId: 8, execute: blocked.op() });
    for (let i = 0; i < 2; i++) void outbox.enqueue({ chatId: -5, execute: blocked.op() });
    await clock.flush();

    const collected = await collect();
    const depth = (chat: string, chatKind: string) =>
      collected.value("telepace.outbox.queue.depth", {
        "telepace.chat.kind": chatKind,
        "telepace.chat.id": chat,
      });
    expect(depth("7", "private")).toBe(3);
    expect(depth("8", "private")).toBeUndefined();
    expect(depth("other", "private")).toBe(2);
    expect(depth("other", "group")).toBe(1);
    expect(depth("other", "none")).toBe(0);
    const chatIds = collected
      .points("telepace.outbox.queue.depth")
      .map((point) => point.attributes["telepace.chat.id"]);
    expect(new Set(chatIds)).toEqual(new Set(["7", "other"]));
    blocked.open();
  });

  it("counts frozen chats and the global freeze", async () => {
    const { clock, outbox, collect } = setup();
    let calls = 0;
    const rateLimitedOnce = () =>
      ++calls === 1 ? Promise.reject(new RetryAfterError(10_000)) : Promise.resolve("ok");
    void outbox.enqueue({ chatId: 7, execute: rateLimitedOnce });
    await clock.flush();
    void outbox.enqueue({ chatId: 7, execute: ok });

    let collected = await collect();
    expect(collected.value("telepace.outbox.frozen_chats", kind("private"))).toBe(1);
    expect(collected.value("telepace.outbox.frozen_chats", kind("group"))).toBe(0);
    expect(collected.value("telepace.outbox.global_freeze.remaining")).toBe(0);

    let global = 0;
    void outbox.enqueue({
      key: "me",
      execute: () =>
        ++global === 1 ? Promise.reject(new RetryAfterError(3_000)) : Promise.resolve("ok"),
    });
    await clock.flush();
    collected = await collect();
    expect(collected.value("telepace.outbox.global_freeze.remaining")).toBe(3);
    await clock.advance(10_000);
    collected = await collect();
    expect(collected.value("telepace.outbox.frozen_chats", kind("private"))).toBe(0);
    expect(collected.value("telepace.outbox.retries")).toBe(2);
  });
});

describe("outbox counters and histograms", () => {
  it("counts 429s by scope and chat kind with retry_after in seconds", async () => {
    const { clock, outbox, collect } = setup();
    const failing = (retryAfterMs: number) => {
      let calls = 0;
      return () =>
        ++calls === 1 ? Promise.reject(new RetryAfterError(retryAfterMs)) : Promise.resolve("ok");
    };
    void outbox.enqueue({ chatId: 7, execute: failing(2_000) });
    void outbox.enqueue({ chatId: -1002, execute: failing(30_000) });
    await clock.flush();
    void outbox.enqueue({ key: "commands", execute: failing(5_000) });
    await clock.runAll();

    const collected = await collect();
    const scoped = (scope: string, chatKind: string) =>
      collected.value("telepace.outbox.rate_limited", {
        "telepace.rate_limit.scope": scope,
        "telepace.chat.kind": chatKind,
      });
    expect(scoped("chat", "private")).toBe(1);
    expect(scoped("chat", "supergroup")).toBe(1);
    expect(scoped("global", "none")).toBe(1);
    const chatWaits = collected.histogram("telepace.outbox.retry_after", {
      "telepace.rate_limit.scope": "chat",
    });
    expect(chatWaits).toMatchObject({ count: 2, sum: 32, min: 2, max: 30 });
    expect(
      collected.histogram("telepace.outbox.retry_after", { "telepace.rate_limit.scope": "global" }),
    ).toMatchObject({ count: 1, sum: 5 });
  });

  it("counts coalesced ops against enqueued ones", async () => {
    const { clock, outbox, collect } = setup();
    const blocked = gate();
    void outbox.enqueue({ chatId: 7, execute: blocked.op() });
    for (let pct = 10; pct <= 50; pct += 10) {
      void outbox.enqueue({ chatId: 7, key: "edit:1", priority: 2, execute: ok });
    }
    blocked.open();
    await clock.runAll();

    const collected = await collect();
    expect(collected.value("telepace.outbox.ops.enqueued")).toBe(6);
    expect(collected.value("telepace.outbox.ops.coalesced")).toBe(4);
    const settled = (outcome: string) =>
      collected.value("telepace.outbox.ops.settled", { "telepace.outcome": outcome });
    expect(settled("superseded")).toBe(4);
    expect(settled("delivered")).toBe(2);
    expect(settled("failed")).toBe(0);
  });

  it("measures the wait from enqueue to the first attempt, by chat kind", async () => {
    const { clock, outbox, collect } = setup({ privateChatRps: 1, groupChatRps: 0.5 });
    void outbox.enqueue({ chatId: 7, execute: ok });
    void outbox.enqueue({ chatId: 7, execute: ok });
    void outbox.enqueue({ chatId: 7, key: "edit:1", priority: 2, execute: ok });
    await clock.advance(500);
    // Coalescing keeps the op's place and its enqueue time.
    void outbox.enqueue({ chatId: 7, key: "edit:1", priority: 2, execute: ok });
    const groupStarts: number[] = [];
    const groupOp = () => {
      groupStarts.push(clock.now());
      return Promise.resolve("ok");
    };
    void outbox.enqueue({ chatId: -5, execute: groupOp });
    void outbox.enqueue({ chatId: -5, execute: groupOp });
    await clock.runAll();

    const collected = await collect();
    // Private: 0 s, 1 s (second send), 2 s (the edit, enqueued at 0).
    expect(collected.histogram("telepace.outbox.queue.wait", kind("private"))).toMatchObject({
      count: 3,
      sum: 3,
      max: 2,
    });
    // Group: whenever the group's pacing let each one start, counted from 0.5 s.
    expect(groupStarts[1]).toBeGreaterThan(500);
    const group = collected.histogram("telepace.outbox.queue.wait", kind("group"));
    expect(group?.count).toBe(2);
    expect(group?.sum).toBeCloseTo(((groupStarts[0] ?? 0) + (groupStarts[1] ?? 0) - 1000) / 1000);
  });

  it("takes the wait from the outbox's waitedMs: ops enqueued before instrumenting, its clock", async () => {
    const clock = new ManualClock();
    const outbox = new TelegramOutbox({ clock, privateChatRps: 1, globalRps: 0 });
    void outbox.enqueue({ chatId: 7, execute: ok });
    void outbox.enqueue({ chatId: 7, execute: ok });
    await clock.advance(300);
    // No `clock` given: the metrics' own clock is the system's, the waits are the outbox's.
    const harness = meterHarness();
    using _metrics = instrumentTelepace({ meter: harness.meter, outbox });
    await clock.runAll();
    const collected = await harness.collect();
    // Only the second op started after instrumenting: 1 s after its enqueue, on the outbox's clock.
    expect(collected.histogram("telepace.outbox.queue.wait", kind("private"))).toMatchObject({
      count: 1,
      sum: 1,
    });
  });

  it("pieces the wait together from enqueue times when started carries no waitedMs", async () => {
    // What an outbox before 0.3 publishes: a `started` event with no time in it.
    const clock = new ManualClock();
    const harness = meterHarness();
    using _metrics = instrumentTelepace({
      meter: harness.meter,
      outbox: new TelegramOutbox(),
      clock,
    });
    const publish = (type: string, event: object) =>
      diagnosticsChannel.channel(`telepace:outbox:${type}`).publish({ type, ...event });
    publish("enqueued", { key: undefined, chat: "7", priority: 0 });
    publish("enqueued", { key: "edit:1", chat: "-5", priority: 2 });
    await clock.advance(400);
    publish("started", { key: undefined, chat: "7", attempt: 1 });
    await clock.advance(1_100);
    publish("started", { key: "edit:1", chat: "-5", attempt: 1 });
    const collected = await harness.collect();
    expect(collected.histogram("telepace.outbox.queue.wait", kind("private"))).toMatchObject({
      count: 1,
      sum: 0.4,
    });
    expect(collected.histogram("telepace.outbox.queue.wait", kind("group"))).toMatchObject({
      count: 1,
      sum: 1.5,
    });
  });

  it("does not measure ops that leave before starting", async () => {
    const { clock, outbox, collect } = setup({ privateChatRps: 1 });
    const controller = new AbortController();
    void outbox.enqueue({ chatId: 7, execute: ok });
    const aborted = outbox.enqueue({ chatId: 7, execute: ok }, { signal: controller.signal });
    void outbox.enqueue({ chatId: 7, key: "edit:1", priority: 2, execute: ok });
    await clock.flush();
    controller.abort(new Error("user went away"));
    await expect(aborted).rejects.toThrow("user went away");
    expect(outbox.dropPending(7, "edit:1")).toBe(true);
    void outbox.enqueue({ chatId: 7, execute: ok });
    await clock.advance(250);
    await clock.runAll();

    const collected = await collect();
    expect(collected.histogram("telepace.outbox.queue.wait", kind("private"))).toMatchObject({
      count: 2,
      sum: 1,
    });
  });
});

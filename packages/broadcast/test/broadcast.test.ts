// A broadcast end to end on a ManualClock: every recipient once at the outbox's pace, each
// outcome recorded, replies never starved, paid pace and its refusal, pause, resume, cancel, and
// a second start of the same id.

import { ManualClock } from "@telepace/core";
import { Priority } from "@telepace/outbox";
import { recordChannels } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import {
  type BroadcastEvent,
  BroadcastRegistry,
  broadcastChannels,
  MemoryBroadcastStore,
} from "../src/index.js";
import {
  type ChatBehaviour,
  FakeTelegram,
  type FakeTelegramOptions,
  runUntil,
  testOutbox,
  users,
} from "./support/fake-telegram.js";

const hello = { method: "sendMessage", params: { text: "Hello" } } as const;

function setup(options: Omit<FakeTelegramOptions, "clock"> = {}) {
  const clock = new ManualClock();
  const telegram = new FakeTelegram({ clock, ...options });
  const outbox = testOutbox(clock);
  const store = new MemoryBroadcastStore();
  const registry = new BroadcastRegistry({ outbox, transport: telegram.transport, store, clock });
  return { clock, telegram, outbox, store, registry };
}

describe("a broadcast", () => {
  it("reaches every recipient once, at 30/s through the outbox", async () => {
    const { clock, telegram, registry } = setup();
    const job = registry.start("news", { message: hello, recipients: users(90) });
    const report = await runUntil(clock, job.result);
    expect(report).toMatchObject({
      status: "completed",
      total: 90,
      mode: "free",
      counts: { sent: 90, blocked: 0, failed: 0, resentAfterCrash: 0 },
    });
    expect(telegram.delivered.size).toBe(90);
    expect(telegram.duplicates()).toEqual([]);
    // 90 at 30 in any second: the last starts in the third second.
    expect(report.elapsedMs).toBeGreaterThanOrEqual(2_000);
    expect(report.elapsedMs).toBeLessThan(3_100);
    expect(telegram.payloads[0]).toEqual({ text: "Hello", chat_id: 1 });
  });

  it("records each recipient's outcome: blocked, deactivated, kicked, missing, migrated, 5xx", async () => {
    const behaviours = new Map<number, ChatBehaviour>([
      [2, "blocked"],
      [3, "deactivated"],
      [4, "kicked"],
      [5, "missing"],
      [6, { migrateTo: -1006 }],
      [7, "bad-gateway"],
      [8, "rate-limited-once"],
    ]);
    const { clock, telegram, registry } = setup({
      behaviour: (id) => behaviours.get(Number(id)) ?? "ok",
    });
    const job = registry.start("outcomes", { message: hello, recipients: [...users(10), "x"] });
    const report = await runUntil(clock, job.result);
    expect(report.counts).toEqual({
      sent: 6, // 1, 8 (after its 429), 9, 10, the migrated group, and "x"
      blocked: 1,
      deactivated: 1,
      forbidden: 1,
      chatNotFound: 1,
      maybeDelivered: 1,
      failed: 0,
      migrated: 1,
      resentAfterCrash: 0,
    });
    // The 5xx is not sent again (it may have arrived: here it had); the 429 was waited out.
    expect(telegram.requests.get("7")).toBe(1);
    expect(telegram.requests.get("8")).toBe(2);
    expect(telegram.delivered.get("-1006")).toBe(1);
    expect(telegram.duplicates()).toEqual([]);
  });

  it("never keeps a reply waiting: the next global slot is the reply's", async () => {
    const { clock, outbox, telegram, registry } = setup();
    const job = registry.start("busy", { message: hello, recipients: users(300) });
    await clock.advance(2_500);
    const askedAt = clock.now();
    let startedAt = Number.NaN;
    const reply = outbox.enqueue({
      chatId: 9_999,
      priority: Priority.send,
      execute: async () => {
        startedAt = clock.now();
        return telegram.transport(
          "sendMessage",
          { chat_id: 9_999, text: "hi" },
          new AbortController().signal,
        );
      },
    });
    await runUntil(clock, reply);
    // 30 in any second: the reply takes the very next slot, within one slot's time (1/30 s).
    expect(startedAt - askedAt).toBeLessThanOrEqual(1_000 / 30 + 10);
    await runUntil(clock, job.result);
  });

  it("sends paid at up to 1000/s when asked, each with allow_paid_broadcast", async () => {
    const { clock, telegram, registry } = setup({ latencyMs: 1 });
    const job = registry.start("paid", { message: hello, recipients: users(2_000), paid: true });
    const report = await runUntil(clock, job.result, { stepMs: 5 });
    expect(report).toMatchObject({ status: "completed", mode: "paid", counts: { sent: 2_000 } });
    expect(report.elapsedMs).toBeGreaterThanOrEqual(1_000);
    expect(report.elapsedMs).toBeLessThan(2_100);
    expect(telegram.payloads.every((payload) => payload.allow_paid_broadcast === true)).toBe(true);
  });

  it("falls back to the free pace when Telegram refuses paid sends, and says so", async () => {
    const { clock, telegram, registry } = setup({ paidBroadcasts: false });
    using events = recordChannels<BroadcastEvent>(broadcastChannels);
    const job = registry.start("refused", { message: hello, recipients: users(120), paid: true });
    const report = await runUntil(clock, job.result);
    expect(report).toMatchObject({
      status: "completed",
      mode: "paid-refused",
      counts: { sent: 120 },
    });
    expect(telegram.duplicates()).toEqual([]);
    expect(telegram.delivered.size).toBe(120);
    expect(events.events.filter((event) => event.type === "paid-refused")).toEqual([
      { type: "paid-refused", id: "refused", retryAfterMs: 1_000 },
    ]);
    // Refused sends were retried free: a few were in flight when the first refusal came.
    expect(telegram.paidRefusals).toBeGreaterThan(0);
    expect(telegram.paidRefusals).toBeLessThanOrEqual(64);
    const free = telegram.payloads.filter((payload) => payload.allow_paid_broadcast !== true);
    expect(free).toHaveLength(120);
    // At 30/s once refused: about 4 s for 120.
    expect(report.elapsedMs).toBeGreaterThan(3_000);
  });

  it("pauses (nothing sent, the store says paused), resumes and completes", async () => {
    const { clock, telegram, store, registry } = setup();
    const job = registry.start("pausing", { message: hello, recipients: users(150) });
    await clock.advance(1_500);
    await runUntil(clock, job.pause());
    const sentAtPause = telegram.payloads.length;
    expect(job.state).toBe("paused");
    expect((await store.read("pausing"))?.state).toBe("paused");
    expect(job.snapshot()).toMatchObject({ state: "paused", queued: 0, inFlight: 0 });
    await clock.advance(10_000);
    expect(telegram.payloads.length).toBe(sentAtPause);
    await job.resume();
    const report = await runUntil(clock, job.result);
    expect(report.counts.sent).toBe(150);
    expect(telegram.duplicates()).toEqual([]);
  });

  it("cancels: nothing more is sent, and a later start ends at once as cancelled", async () => {
    const { clock, telegram, registry } = setup();
    const job = registry.start("cancelling", { message: hello, recipients: users(300) });
    await clock.advance(2_000);
    const report = await runUntil(clock, job.cancel());
    expect(report.status).toBe("cancelled");
    const sent = telegram.payloads.length;
    expect(sent).toBeGreaterThan(30);
    expect(sent).toBeLessThan(300);
    const again = registry.start("cancelling", { message: hello, recipients: users(300) });
    expect((await runUntil(clock, again.result)).status).toBe("cancelled");
    expect(telegram.payloads.length).toBe(sent);
  });

  it("refuses a second start of a running id, and a finished one ends at once without sending", async () => {
    const { clock, telegram, registry } = setup();
    const job = registry.start("once", { message: hello, recipients: users(40) });
    expect(() => registry.start("once", { message: hello, recipients: users(40) })).toThrow(
      expect.objectContaining({ code: "ERR_BROADCAST_RUNNING" }),
    );
    expect(registry.get("once")).toBe(job);
    await runUntil(clock, job.result);
    const again = registry.start("once", { message: hello, recipients: users(40) });
    const report = await runUntil(clock, again.result);
    expect(report).toMatchObject({ status: "completed", counts: { sent: 40 } });
    expect(telegram.payloads).toHaveLength(40);
  });

  it("refuses another message under a stored id", async () => {
    const { clock, registry } = setup();
    await runUntil(clock, registry.start("same", { message: hello, recipients: [1] }).result);
    const other = registry.start("same", {
      message: { method: "sendMessage", params: { text: "Other" } },
      recipients: [1],
    });
    const report = await runUntil(clock, other.result);
    expect(report.status).toBe("failed");
    expect(report.error).toMatchObject({ code: "ERR_BROADCAST_CONFLICT" });
  });

  it("stops after sends fail in a row for a reason that is not their recipient's", async () => {
    const { clock, store, registry } = setup({ behaviour: () => "bad-request" });
    const job = registry.start("broken", {
      message: hello,
      recipients: users(200),
      maxConsecutiveFailures: 5,
    });
    const report = await runUntil(clock, job.result);
    expect(report.status).toBe("failed");
    expect(report.error).toMatchObject({ code: "ERR_BROADCAST_FAILING" });
    expect(report.counts.failed).toBeGreaterThanOrEqual(5);
    expect(report.counts.failed).toBeLessThan(100);
    expect((await store.read("broken"))?.state).toBe("paused");
  });

  it("reads cursors and iterables, and reports progress with a rate and an ETA", async () => {
    const { clock, telegram, registry } = setup();
    const cursor = function* (from: number) {
      for (let id = from; id < 120; id++) yield id + 1;
    };
    const job = registry.start("cursor", { message: hello, recipients: cursor, total: 120 });
    await clock.advance(2_000);
    const snapshot = job.snapshot();
    expect(snapshot).toMatchObject({ state: "running", total: 120, mode: "free" });
    expect(snapshot.settled).toBeGreaterThan(30);
    expect(snapshot.remaining).toBe(120 - snapshot.settled);
    expect(snapshot.ratePerSecond).toBeGreaterThan(20);
    expect(snapshot.etaMs).toBeGreaterThan(0);
    expect(Object.isFrozen(snapshot)).toBe(true);
    await runUntil(clock, job.result);
    async function* once() {
      for (const id of users(50, 501)) yield id;
    }
    const iterated = registry.start("iterable", { message: hello, recipients: once() });
    const report = await runUntil(clock, iterated.result);
    expect(report).toMatchObject({ status: "completed", total: 50, counts: { sent: 50 } });
    expect(telegram.delivered.size).toBe(170);
  });

  it("keeps at most maxQueued sends in the outbox", async () => {
    const { clock, outbox, registry } = setup({ latencyMs: 200 });
    // Paid sends are not spread, so the broadcast fills its share of the outbox.
    const job = registry.start("bounded", {
      message: hello,
      recipients: users(500),
      paid: true,
      maxQueued: 25,
    });
    let most = 0;
    while (job.state !== "completed") {
      await clock.advance(50);
      const { pending, inFlight } = outbox.snapshot();
      most = Math.max(most, pending + inFlight);
    }
    expect(most).toBe(25);
  });
});

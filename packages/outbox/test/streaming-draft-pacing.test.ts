// Adaptive draft pacing: frames as fast as they are answered, a pace learned from a 429 (kept by
// the chat's later streams, the prior of chats that taught none, relaxed after a quiet minute),
// a backoff after failed frames.

import type { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { RetryAfterError, TelegramApiError } from "../src/index.js";
import { expectFloorKept, type StreamCall, setupStreams } from "./support/stream-transport.js";

const PRIVATE = 42;

/**
 * A draft limit like the simulator's: `perSecond` a second per chat, `burst` at once, each chat
 * with a bucket of its own (`perSecondIn` gives a chat another rate).
 */
function draftBucket(
  perSecond: number,
  burst: number,
  perSecondIn: Readonly<Record<number, number>> = {},
) {
  const buckets = new Map<unknown, { tokens: number; at: number }>();
  const refusals = new Map<unknown, number>();
  const rule = (call: StreamCall) => {
    const chat = call.params.chat_id;
    const rate = perSecondIn[chat as number] ?? perSecond;
    const bucket = buckets.get(chat) ?? { tokens: burst, at: call.startedAt };
    buckets.set(chat, bucket);
    bucket.tokens = Math.min(burst, bucket.tokens + ((call.startedAt - bucket.at) * rate) / 1000);
    bucket.at = call.startedAt;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    refusals.set(chat, (refusals.get(chat) ?? 0) + 1);
    // Telegram reports whole seconds, at least one.
    return new RetryAfterError(1000);
  };
  const total = () => [...refusals.values()].reduce((sum, count) => sum + count, 0);
  return { rule, refusals: total, refusalsIn: (chat: number) => refusals.get(chat) ?? 0 };
}

/** Appends a word every `everyMs` for `count` words. */
async function produce(
  clock: ManualClock,
  stream: { append(text: string): boolean },
  count: number,
  everyMs: number,
) {
  for (let i = 0; i < count; i++) {
    stream.append(`w${i} `);
    await clock.advance(everyMs);
  }
}

const gaps = (calls: readonly StreamCall[]) =>
  calls.slice(1).map((call, i) => call.startedAt - (calls[i] as StreamCall).startedAt);

describe("adaptive draft pacing", () => {
  it("learns a draft limit from its first 429 and meets no other", async () => {
    const { clock, api, streams } = setupStreams({}, 20);
    const bucket = draftBucket(5, 5);
    api.rules.set("sendMessageDraft", bucket.rule);
    const stream = streams.open(PRIVATE, { thinking: false });
    await produce(clock, stream, 500, 20); // 10 s at 50 words a second
    const outcome = stream.end();
    await clock.runAll();
    expect(await outcome).toMatchObject({ status: "delivered", mode: "draft" });
    expect(bucket.refusals()).toBe(1);
    const drafts = api.of("sendMessageDraft");
    // As fast as answered (20 ms) while the floor's burst lasts, then one per 34 ms on average,
    // until the sixth frame meets the empty bucket (and is retried).
    const first = gaps(drafts.slice(0, 6));
    for (const [i, gap] of [20, 20, 28, 34, 34].entries()) expect(first[i]).toBeCloseTo(gap, 6);
    // Five answered in the second before the 429 teach four a second: 250 ms from then on.
    for (const gap of gaps(drafts.slice(6))) expect(gap).toBeGreaterThanOrEqual(250);
    expect(drafts.length).toBeGreaterThanOrEqual(40);
    expect(streams.snapshot().pacedChats).toBe(1);

    // The chat's next stream starts at the learned pace: no 429 at all.
    const next = streams.open(PRIVATE, { thinking: false });
    const before = drafts.length;
    await produce(clock, next, 100, 20);
    next.end();
    await clock.runAll();
    expect(bucket.refusals()).toBe(1);
    for (const gap of gaps(api.of("sendMessageDraft").slice(before))) {
      expect(gap).toBeGreaterThanOrEqual(250);
    }
  });

  it("holds the chat for retry_after, then sends the newest text", async () => {
    const { clock, api, streams } = setupStreams({}, 20);
    api.rules.set("sendMessageDraft", (_call, index) =>
      index === 3 ? new RetryAfterError(2000) : undefined,
    );
    const stream = streams.open(PRIVATE, { thinking: false });
    await produce(clock, stream, 200, 20);
    stream.end();
    await clock.runAll();
    const drafts = api.of("sendMessageDraft");
    const refused = drafts[3] as StreamCall;
    const retry = drafts[4] as StreamCall;
    expect(retry.startedAt - (refused.endedAt ?? 0)).toBeGreaterThanOrEqual(2000);
    // The retry reads the text as it is when it starts, not as it was refused.
    expect(String(retry.params.text).length).toBeGreaterThan(String(refused.params.text).length);
    // Three drafts answered in the second before it teach two a second: 500 ms from then on.
    for (const gap of gaps(drafts.slice(4))) expect(gap).toBeGreaterThanOrEqual(500);
  });

  it("a quiet minute after the 429 halves the learned pace, and again each minute", async () => {
    const { clock, api, streams } = setupStreams({}, 20);
    api.rules.set("sendMessageDraft", (_call, index) =>
      index === 5 ? new RetryAfterError(1000) : undefined,
    );
    const stream = streams.open(PRIVATE, { thinking: false });
    for (let i = 0; i < 7_000; i++) {
      stream.replace(`tick ${i}`); // 140 s of a short text: no split, one message
      await clock.advance(20);
    }
    stream.end();
    await clock.runAll();
    const drafts = api.of("sendMessageDraft");
    const refusedAt = (drafts[5] as StreamCall).endedAt ?? 0;
    const gapsIn = (fromMs: number, toMs: number) =>
      gaps(drafts.filter((call) => call.startedAt > fromMs && call.startedAt < toMs));
    // 5 answered in the second before it teach 250 ms, 125 ms after a minute, then 62.5 ms.
    const first = gapsIn(refusedAt + 1000, refusedAt + 59_000);
    expect(Math.min(...first)).toBeGreaterThanOrEqual(250);
    expect(Math.max(...first)).toBeLessThanOrEqual(270);
    const second = gapsIn(refusedAt + 61_000, refusedAt + 119_000);
    expect(Math.min(...second)).toBeGreaterThanOrEqual(125);
    expect(Math.max(...second)).toBeLessThanOrEqual(145);
    const third = gapsIn(refusedAt + 121_000, 139_000);
    expect(Math.min(...third)).toBeGreaterThanOrEqual(62);
    expect(Math.max(...third)).toBeLessThanOrEqual(80);
  });

  it("backs off after failed frames and returns to fast pacing once one is answered", async () => {
    const { clock, api, streams } = setupStreams({}, 10);
    const failing = new Set([2, 3, 4]);
    api.rules.set("sendMessageDraft", (_call, index) =>
      failing.has(index)
        ? new TelegramApiError({
            method: "sendMessageDraft",
            errorCode: 400,
            description: "Bad Request: can't parse entities",
          })
        : undefined,
    );
    const stream = streams.open(PRIVATE, { thinking: false });
    await produce(clock, stream, 300, 20);
    stream.end();
    await clock.runAll();
    const drafts = api.of("sendMessageDraft");
    const afterFailure = (index: number) =>
      (drafts[index + 1] as StreamCall).startedAt - ((drafts[index] as StreamCall).endedAt ?? 0);
    // 500 ms, then 1 s, then 2 s after the failures in a row; the answered one resets it.
    expect(afterFailure(2)).toBe(500);
    expect(afterFailure(3)).toBe(1000);
    expect(afterFailure(4)).toBe(2000);
    // As fast as answered (10 ms) while the floor's burst lasts, then its 34 ms on average.
    const after = gaps(drafts.slice(5));
    expect(after[0]).toBeCloseTo(10, 6);
    expect(after[1]).toBeCloseTo(24, 6);
    expectFloorKept(drafts.slice(5).map((call) => call.startedAt));
  });
});

describe("the bot's prior draft pace", () => {
  const drafts = (api: { of(method: "sendMessageDraft"): StreamCall[] }, chat: number) =>
    api.of("sendMessageDraft").filter((call) => call.params.chat_id === chat);

  it("a new chat's first stream starts from the pace another chat taught", async () => {
    const { clock, api, streams } = setupStreams({}, 20);
    const bucket = draftBucket(5, 5);
    api.rules.set("sendMessageDraft", bucket.rule);
    expect(streams.snapshot().priorDraftSpacingMs).toBe(0);
    const first = streams.open(1, { thinking: false });
    await produce(clock, first, 100, 20);
    // A second chat's stream opens while the first is still streaming, after its 429.
    const second = streams.open(2, { thinking: false });
    await Promise.all([produce(clock, first, 400, 20), produce(clock, second, 400, 20)]);
    first.end();
    second.end();
    await clock.runAll();
    expect(bucket.refusalsIn(1)).toBe(1);
    expect(bucket.refusalsIn(2)).toBe(0);
    // Chat 1 taught 250 ms; chat 2 kept it from its first frame and taught nothing itself.
    for (const gap of gaps(drafts(api, 2))) expect(gap).toBeGreaterThanOrEqual(250);
    expect(streams.snapshot()).toMatchObject({ pacedChats: 1, priorDraftSpacingMs: 250 });
  });

  it("relaxes as a chat's pace does: a new chat after quiet minutes starts at the floor", async () => {
    const { clock, api, streams } = setupStreams({}, 20);
    const bucket = draftBucket(5, 5);
    api.rules.set("sendMessageDraft", bucket.rule);
    const first = streams.open(1, { thinking: false });
    await produce(clock, first, 100, 20);
    first.end();
    await clock.runAll();
    await clock.advance(61_000);
    expect(streams.snapshot().priorDraftSpacingMs).toBe(125);
    await clock.advance(3 * 60_000); // 250 ms halved four times: 15.6 ms, below the floor
    const later = streams.open(3, { thinking: false });
    await produce(clock, later, 10, 20);
    later.end();
    await clock.runAll();
    const fresh = gaps(drafts(api, 3));
    for (const [i, gap] of [20, 20, 28, 34].entries()) expect(fresh[i]).toBeCloseTo(gap, 6);
    expectFloorKept(drafts(api, 3).map((call) => call.startedAt));
  });

  it("keeps the faster pace while it is held: one slow chat does not slow new chats", async () => {
    const { clock, api, streams } = setupStreams({}, 20);
    // Chat 2 takes one draft a second; every other chat five.
    const bucket = draftBucket(5, 5, { 2: 1 });
    api.rules.set("sendMessageDraft", bucket.rule);
    const fast = streams.open(1, { thinking: false });
    await produce(clock, fast, 100, 20);
    fast.end();
    await clock.runAll();
    const slow = streams.open(2, { thinking: false });
    await produce(clock, slow, 300, 20);
    slow.end();
    await clock.runAll();
    expect(bucket.refusalsIn(2)).toBeGreaterThanOrEqual(1);
    const fresh = streams.open(4, { thinking: false });
    await produce(clock, fresh, 200, 20);
    fresh.end();
    await clock.runAll();
    expect(bucket.refusalsIn(4)).toBe(0);
    const freshGaps = gaps(drafts(api, 4));
    expect(Math.min(...freshGaps)).toBeGreaterThanOrEqual(250);
    expect(Math.max(...freshGaps)).toBeLessThan(500);
    expect(streams.snapshot().pacedChats).toBe(2);
  });
});

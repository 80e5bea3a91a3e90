// Adaptive draft pacing: frames as fast as they are answered, a pace learned from a 429 (kept by
// the chat's later streams, relaxed after a quiet minute), a backoff after failed frames.

import type { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { RetryAfterError, TelegramApiError } from "../src/index.js";
import { type StreamCall, setupStreams } from "./support/stream-transport.js";

const PRIVATE = 42;

/** A draft limit like the simulator's: `perSecond` a second per chat, `burst` at once. */
function draftBucket(perSecond: number, burst: number) {
  let tokens = burst;
  let at = 0;
  let refusals = 0;
  const rule = (call: StreamCall) => {
    tokens = Math.min(burst, tokens + ((call.startedAt - at) * perSecond) / 1000);
    at = call.startedAt;
    if (tokens >= 1) {
      tokens -= 1;
      return undefined;
    }
    refusals++;
    // Telegram reports whole seconds, at least one.
    return new RetryAfterError(1000);
  };
  return { rule, refusals: () => refusals };
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
    // As fast as the floor until the sixth frame meets the empty bucket (and is retried).
    expect(gaps(drafts.slice(0, 6))).toEqual([34, 34, 34, 34, 34]);
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
    for (const gap of gaps(drafts.slice(5))) expect(gap).toBe(34);
  });
});

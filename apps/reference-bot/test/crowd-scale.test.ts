// The demo at scale, as `pnpm start -- --users 40 --groups 8` runs it but for 15 s: the bot in a
// child process on a file journal, killed with SIGKILL mid-job and started again. Every reply
// arrives, p99 within 10 s, no 429, no update lost, and the report's figures reconcile.

import { describe, expect, it } from "vitest";
import { playDemo } from "../src/demo/embedded-demo.js";
import { percentile, replyLatencies } from "../src/demo/report.js";
import { BOT_COMMAND } from "./harness.js";

describe("the demo's crowd at scale", () => {
  it("40 users and 8 groups for 15 s: p99 <= 10 s, nothing missing or lost", {
    timeout: 120_000,
  }, async () => {
    let text = "";
    const result = await playDemo(
      {
        target: { kind: "embedded" },
        logLevel: "error",
        dataDir: undefined,
        crowd: { users: 40, groups: 8, durationS: 15, seed: 11 },
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
    expect(percentile(replyLatencies(result.expectations), 99)).toBeLessThanOrEqual(10_000);
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

    // The report says so.
    expect(text).toMatch(/updates handled +(\d+) of \1 sent to the bot, lost 0 /);
    expect(text).toContain(
      `recovered ${jobs.recovered} after a crash (${jobs.recovered} users told)`,
    );
    expect(text).toMatch(
      /journal +file journal in .* \(durable\); \d+ updates fetched, 0 fetched twice/,
    );
    expect(text).toContain("result                every expected reply arrived");
  });
});

// End to end: 4 processes of one bot (one token) against the sim at Telegram's limits, sharing
// pacing and updates through one redis-server at the reference bot's lease defaults; a worker and
// then the poller are killed with SIGKILL mid-load, and the people they held are answered again
// within about the lease. The peers (grammY's throttler over clustered Bottleneck; grammY sending
// through BullMQ under its rate limiter) run a tiny load.

import { start } from "@telepace/bot-api-sim";
import { describeWithRedis } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { Cluster, type ClusterStack } from "../src/scaleout/cluster/cluster.js";
import { ProcessPool } from "../src/scaleout/cluster/process-pool.js";
import { timeRoundTrip } from "../src/scaleout/cluster/round-trip.js";
import {
  busiestSecond,
  runScaleout,
  runScaleoutPastWindow,
  type ScaleoutResult,
} from "../src/scaleout/cluster/scenario.js";

describe("timeRoundTrip", () => {
  it("calls one after another and takes the median, so one slow call does not move it", async () => {
    const delays = [80, 1, 2, 1, 3];
    let running = 0;
    let most = 0;
    const median = await timeRoundTrip(async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, delays.shift()));
      running--;
    });
    expect(delays).toEqual([]);
    expect(most).toBe(1);
    expect(median).toBeLessThan(40);
  });
});

describe("busiestSecond", () => {
  it("counts the most times within any 1,000 ms, in any order", () => {
    expect(busiestSecond([])).toBe(0);
    expect(busiestSecond([5])).toBe(1);
    // 0 and 999 share a second; 1_000 starts the next.
    expect(busiestSecond([1_000, 0, 999])).toBe(2);
    expect(busiestSecond([0, 400, 800, 1_200, 1_300, 1_350, 2_400])).toBe(5);
  });
});

/** Every text echoed once, none refused with a 429. */
function expectEverySend(result: ScaleoutResult, stack: ClusterStack, sent: number): void {
  expect(result.stack).toBe(stack);
  expect(result.sent).toBe(sent);
  expect(result.lost).toBe(0);
  expect(result.duplicates).toBe(0);
  expect(result.rateLimited).toBe(0);
  expect(result.roundTripMs).toBeGreaterThan(0);
}

describeWithRedis("four processes, one bot", (server) => {
  const peerRun = (stack: ClusterStack) => ({ redisUrl: server().url, processes: 2, stack });

  it("no 429, per-person order, nothing lost through a worker kill and a poller kill", async () => {
    const result = await runScaleout({
      redisUrl: server().url,
      processes: 4,
      people: 24,
      messagesPerPerson: 8,
      killWorkerAfterMs: 2_000,
      killPollerAfterMs: 5_000,
      afterPollerKill: 1,
      pollerProbes: 4,
    });
    console.log("scaleout e2e:", JSON.stringify(result));
    expect(result.rateLimited).toBe(0);
    expect(result.orderViolations).toBe(0);
    expect(result.lost).toBe(0);
    expect(result.roundTripMs).toBeGreaterThan(0);
    // The killed worker held some of the 24 people, each paced at 1/s: they are answered again
    // once its 1.5 s leases expire (a margin for a loaded machine).
    expect(result.chatsHeldByKilledWorker).toBeGreaterThan(0);
    expect(result.handoverMs).toBeLessThan(1_500 + 500);
    expect(result.handoverAtSimMs).toBeLessThan(2_000 + 1_000);
    expect(result.pollerTakeoverMs).toBeLessThan(3_000);
    expect(result.pollerHandoverAtSimMs).toBeLessThan(2_000 + 1_500);
    // The kills leave gaps (the bench measures the pace of an undisturbed run): a sanity check.
    expect(result.sendsPerSecondVsLimit).toBeGreaterThan(0.4);
  }, 60_000);

  it("the throttler peer: each process gets its chats' updates, echoes them in order", async () => {
    const result = await runScaleout({ ...peerRun("bottleneck"), people: 6, messagesPerPerson: 2 });
    expectEverySend(result, "bottleneck", 12);
    expect(result.orderViolations).toBe(0);
    // Each chat paced at 1/s by its clustered limiter: a person's 2 echoes are >= 1 s apart.
    expect(result.sendsPerSecondVsLimit).toBeLessThan(12 / 2 / 30);
  }, 60_000);

  it("the BullMQ peer: jobs from every process share one limiter, every send made", async () => {
    const result = await runScaleout({ ...peerRun("bullmq"), people: 20, messagesPerPerson: 2 });
    expectEverySend(result, "bullmq", 40);
    // 40 sends under one queue-wide 30 per 1,000 ms: the 31st starts a window after the first
    // started, so the two processes' sends span about a second at the sim (less the first
    // request's own time; each process alone would have sent its 20 at once). The window is
    // fixed, not sliding: a second that straddles two windows may hold more than 30.
    const spanSeconds = result.sent / (result.sendsPerSecondVsLimit * 30) - 1;
    expect(spanSeconds).toBeGreaterThan(0.9);
  }, 60_000);

  it("a window cuts a slow run; the pool's processes then serve the next run afresh", async () => {
    const pool = new ProcessPool();
    try {
      const options = peerRun("bottleneck");
      // The throttler sends a person's texts 1 s apart: in a 1 s window at most 2 of 3 each.
      const cut = await runScaleout({
        ...options,
        people: 30,
        messagesPerPerson: 3,
        windowMs: 1_000,
        pool,
      });
      expect(cut.sent).toBeLessThanOrEqual(60);
      expect(cut.waitingAtWindowEnd).toBeGreaterThanOrEqual(30);
      expect(cut.lost).toBe(0);
      const idle = await pool.take("bottleneck", 2);
      pool.giveBack("bottleneck", idle);
      const next = await runScaleout({ ...options, people: 6, messagesPerPerson: 2, pool });
      expect(next.sent).toBe(12);
      expect(next.lost).toBe(0);
      expect(next.duplicates).toBe(0);
      expect(next.waitingAtWindowEnd).toBeUndefined();
      const again = await pool.take("bottleneck", 2);
      // The same two processes served both runs.
      expect(again.map((child) => child.pid)).toEqual(idle.map((child) => child.pid));
      pool.giveBack("bottleneck", again);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it("a run past its window measures the window as a cut run would, and then all of it", async () => {
    // 40 × 2 texts at telepace's 30/s take about 2.7 s: a 1 s window holds about a third.
    const { window, toLastEcho } = await runScaleoutPastWindow({
      redisUrl: server().url,
      processes: 2,
      people: 40,
      messagesPerPerson: 2,
      windowMs: 1_000,
    });
    expectEverySend(toLastEcho, "telepace", 80);
    expect(toLastEcho.orderViolations).toBe(0);
    expect(toLastEcho.waitingAtWindowEnd).toBeUndefined();
    // The window's view: what was echoed by its end, the rest waiting, nothing given up on.
    expect(window.sent).toBeGreaterThan(0);
    expect(window.sent).toBeLessThan(80);
    expect(window.lost).toBe(0);
    expect(window.sent + (window.waitingAtWindowEnd ?? 0)).toBe(80);
    // Its span is the window (+ 1 s), not the run's: at 30/s no more than 31 in 1 s.
    expect(window.sendsPerSecondVsLimit).toBeCloseTo(window.sent / 2 / 30, 10);
    expect(window.sent).toBeLessThanOrEqual(31);
    expect(window.durationMs).toBeLessThan(toLastEcho.durationMs);
  }, 60_000);

  it("a run past its window needs a window and no kills", async () => {
    const options = { redisUrl: server().url, processes: 1, people: 1, messagesPerPerson: 1 };
    await expect(runScaleoutPastWindow({ ...options, windowMs: 0 })).rejects.toThrow(
      "Expected `windowMs` to be a number > 0, got 0",
    );
    await expect(
      runScaleoutPastWindow({ ...options, windowMs: 1_000, killWorkerAfterMs: 500 }),
    ).rejects.toThrow("Expected no kills in a run measured over a window");
  });

  it("a process whose polling stops on a 409 ends the run with the reason", async () => {
    const sim = await start();
    const cluster = await Cluster.start({
      processes: 1,
      redisUrl: server().url,
      apiRoot: sim.apiRoot,
      token: sim.token,
      prefix: `scaleout-conflict-${process.pid}`,
    });
    try {
      let failure: unknown;
      cluster.failed.catch((error: unknown) => {
        failure = error;
      });
      // Of two parked polls the sim ends the older with 409: a poll after the process's ends its.
      while (failure === undefined) {
        await fetch(`${sim.apiRoot}/bot${sim.token}/getUpdates?timeout=1`).then((r) => r.text());
      }
      expect(String(failure)).toMatch(
        /^Error: scaleout: node1 stopped: getUpdates answered 409 Conflict/,
      );
      const { child } = cluster.nodes[0] as (typeof cluster.nodes)[number];
      const code = child.exitCode ?? (await new Promise((resolve) => child.once("exit", resolve)));
      expect(code).toBe(1);
    } finally {
      await cluster.stop();
      await sim.close();
    }
  }, 30_000);
});

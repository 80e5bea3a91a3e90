// Jobs shared by a bot's processes: a cancel set on any process reaches the one running the job,
// a process that stops renewing loses its jobs to one that renews, which is told what they were
// (record and progress) so it can end them, and the process that lost them hears so.

import { describeWithRedis, eventually, spyLogger } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import { RedisJobRegistry } from "../src/index.js";

let bots = 1_500;
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describeWithRedis("RedisJobRegistry", (server) => {
  const registry = (botId: number, ownerId: string, leaseMs = 1_500) => {
    const jobs = new RedisJobRegistry({ redis: server().url, botId, ownerId, leaseMs });
    cleanup.push(() => jobs.close());
    return jobs;
  };

  it("a cancel asked on one process is heard by the owner at its next renewal; only the owner's user may ask", async () => {
    const bot = ++bots;
    const owner = registry(bot, "p1");
    const other = registry(bot, "p2");
    const heard: string[] = [];
    owner.onCancel((id) => heard.push(id));
    await owner.add("job1", { chat: 7 }, { cancellableBy: 7 });
    void owner.run();
    void other.run();
    expect(await other.requestCancel("job1", 8)).toBe("not-allowed");
    expect(await other.requestCancel("job1", 7)).toBe("requested");
    await eventually("the owner heard it", () => heard.length > 0, { timeoutMs: 2_000 });
    expect(heard[0]).toBe("job1");
    // The owner ends the job: it is gone for everyone.
    expect(await owner.remove("job1")).toBe(true);
    expect(await other.requestCancel("job1", 7)).toBe("not-found");
    expect(owner.snapshot()).toMatchObject({ jobs: 0, cancelsHeard: heard.length, lost: 0 });
  });

  it("a process that stops renewing: its job passes to one that renews, with its record and last progress", async () => {
    const bot = ++bots;
    const dead = registry(bot, "dead", 300);
    await dead.add("job2", { chat: 9, seconds: 10 });
    dead.setProgress("job2", 0.43);
    await dead.renew();
    // The process dies: no more renewals. Its jobs are still there for a lease.
    const survivor = registry(bot, "alive", 300);
    const orphans: unknown[] = [];
    survivor.onOrphan((job) => {
      orphans.push(job);
      void survivor.remove(job.id);
    });
    const started = performance.now();
    void survivor.run();
    await eventually("taken over", () => orphans.length === 1, { timeoutMs: 3_000 });
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(orphans).toEqual([{ id: "job2", record: { chat: 9, seconds: 10 }, progress: 0.43 }]);
    await eventually("removed", () => survivor.snapshot().jobs === 0);
    expect(await survivor.requestCancel("job2")).toBe("not-found");
    expect(survivor.snapshot()).toMatchObject({ orphansTaken: 1, lost: 0 });
  });

  it("a process whose lease ran out while it did not renew hears that its job was taken", async () => {
    const bot = ++bots;
    const logger = spyLogger();
    const slow = new RedisJobRegistry({
      redis: server().url,
      botId: bot,
      ownerId: "slow",
      leaseMs: 200,
      logger,
    });
    cleanup.push(() => slow.close());
    const lost: string[] = [];
    slow.onLost((id) => lost.push(id));
    await slow.add("job3", { chat: 1 });
    await new Promise((resolve) => setTimeout(resolve, 250));
    const taker = registry(bot, "taker", 200);
    const taken: string[] = [];
    taker.onOrphan((job) => taken.push(job.id));
    await taker.renew();
    expect(taken).toEqual(["job3"]);
    await slow.renew();
    expect(lost).toEqual(["job3"]);
    expect(slow.snapshot()).toMatchObject({ jobs: 0, lost: 1 });
    expect(await slow.remove("job3")).toBe(false);
    expect(logger.calls.map((call) => call.message)).toEqual([
      "Another process took over a job of this one (its renewals were missed)",
    ]);
  });

  it("two bots do not see each other's jobs", async () => {
    const a = registry(++bots, "a");
    const b = registry(++bots, "b");
    await a.add("job4", 1);
    expect(await b.requestCancel("job4")).toBe("not-found");
    expect(await a.requestCancel("job4")).toBe("requested");
  });
});

describe("RedisJobRegistry options and arguments", () => {
  it("are checked", async () => {
    const make = (options: unknown) => () => new RedisJobRegistry(options as never);
    expect(make(undefined)).toThrow(TypeError);
    expect(make({ redis: "redis://h", botId: 1, leaseMs: 50 })).toThrow(RangeError);
    expect(make({ redis: "redis://h", botId: 1, leaseMs: 1_000, renewMs: 1_000 })).toThrow(
      /renewMs/,
    );
    expect(make({ redis: "redis://h", botId: 1, leaseMs: 1_000, lease: 2 })).toThrow(
      "did you mean `leaseMs`?",
    );
    const jobs = new RedisJobRegistry({ redis: "redis://127.0.0.1:1", botId: 1 });
    expect(() => jobs.add("bad id", {})).toThrow(
      'Expected a job id of 1 to 64 letters, digits, "_" or "-", got "bad id"',
    );
    expect(() => jobs.onCancel("nope" as never)).toThrow(TypeError);
    await jobs.close();
  });
});

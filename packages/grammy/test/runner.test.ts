// run(bot) against the sim: updates stored and confirmed before they finish, per-principal order
// with principals in parallel, middleware errors to bot.catch, and a stop that drains.

import { createDeferred } from "@telepace/core";
import { eventually } from "@telepace/testing";
import { MemoryUpdateJournal, PollingStoppedError } from "@telepace/update-dispatch";
import { Bot } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { type RunnerHandle, run } from "../src/index.js";
import { type Fixture, fixture } from "./support.js";

let f: Fixture | undefined;
let runner: RunnerHandle | undefined;
afterEach(async () => {
  await runner?.stop();
  runner = undefined;
  await f?.close();
  f = undefined;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("run(bot)", () => {
  it("keeps each person's updates in order and runs different people in parallel", async () => {
    f = await fixture();
    const { sim, bot } = f;
    const slow = sim.users.create({ firstName: "Slow" });
    const fast = sim.users.create({ firstName: "Fast" });
    const slowChat = sim.chats.createPrivate(slow);
    const fastChat = sim.chats.createPrivate(fast);
    const handled: string[] = [];
    bot.on("message:text", async (ctx) => {
      if (ctx.from.id === slow.id) await sleep(40);
      handled.push(ctx.message.text);
      await ctx.reply(`echo ${ctx.message.text}`);
    });
    runner = run(bot, { pollTimeoutSeconds: 1 });
    for (let i = 0; i < 4; i++) sim.sendText(slow, slowChat, `slow ${i}`);
    sim.sendText(fast, fastChat, "fast 0");
    await eventually("every reply", () =>
      expect(sim.transcript(slowChat.id).messages).toHaveLength(8),
    );
    expect(handled.filter((text) => text.startsWith("slow"))).toEqual([
      "slow 0",
      "slow 1",
      "slow 2",
      "slow 3",
    ]);
    // The fast user was not held behind the slow one's four updates.
    expect(handled.indexOf("fast 0")).toBeLessThan(handled.indexOf("slow 3"));
    expect(sim.transcript(fastChat.id).messages.at(-1)).toMatchObject({ text: "echo fast 0" });
    expect(runner.isRunning()).toBe(true);
  });

  it("confirms the offset once updates are journaled, not when they finish, and stop() drains", async () => {
    const journal = new MemoryUpdateJournal();
    f = await fixture();
    const { sim, bot } = f;
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const gate = createDeferred<void>();
    let finished = false;
    bot.on("message", async (ctx) => {
      await gate.promise;
      await ctx.reply("finally");
      finished = true;
    });
    runner = run(bot, { journal, pollTimeoutSeconds: 1 });
    sim.sendText(user, chat, "slow job");
    await eventually("the update is stored", () => runner?.snapshot().unfinished === 1);
    // The next poll confirmed it while the handler still waits.
    await eventually("confirmed to Telegram", () => sim.pendingUpdates() === 0);
    expect((await journal.unfinished()).map((update) => update.message?.text)).toEqual([
      "slow job",
    ]);

    // Whether the handler had finished when stop() resolved: a stop that did not drain would
    // resolve while the gate still holds the handler.
    let finishedAtStop: boolean | undefined;
    const stopping = runner.stop().then((result) => {
      finishedAtStop = finished;
      return result;
    });
    // Polling has ended and the intake is draining: from here only the handler holds the stop.
    await runner.task();
    expect(runner.isRunning()).toBe(false);
    await eventually("the intake is draining", () => runner?.snapshot().state === "closing");
    expect(runner.snapshot().unfinished).toBe(1);
    expect(finishedAtStop).toBeUndefined();
    gate.resolve();
    expect(await stopping).toEqual({ status: "drained", unfinished: 0 });
    expect(finishedAtStop).toBe(true);
    expect(await journal.unfinished()).toEqual([]);
    expect(sim.transcript(chat.id).messages.at(-1)).toMatchObject({ text: "finally" });
    await expect(runner.task()).resolves.toBeUndefined();
    expect(runner.stop()).toBe(runner.stop());
  });

  it("hands middleware errors to bot.catch and goes on", async () => {
    f = await fixture();
    const { sim, bot } = f;
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const caught: unknown[] = [];
    bot.catch((error) => {
      caught.push(error.error);
    });
    bot.on("message:text", async (ctx) => {
      if (ctx.message.text === "boom") throw new Error("boom");
      await ctx.reply("fine");
    });
    runner = run(bot, { pollTimeoutSeconds: 1 });
    sim.sendText(user, chat, "boom");
    sim.sendText(user, chat, "after");
    await eventually("the reply after the error", () =>
      expect(sim.transcript(chat.id).messages.at(-1)).toMatchObject({ text: "fine" }),
    );
    expect(caught).toHaveLength(1);
    await eventually("both finished", () => runner?.snapshot().finished === 2);
  });

  it("checks its options whole", () => {
    expect(() => run({} as never, { pollTimeoutSecond: 1 } as never)).toThrow(
      "Unknown option `pollTimeoutSecond` in `options` (did you mean `pollTimeoutSeconds`?)",
    );
    expect(() => run({} as never, { sink: { concurrency: 8 } } as never)).toThrow(
      "Unknown option `sink` in `options` (use `dispatcher`",
    );
    // The default maxConcurrency (maxActivePrincipals) leaves bad dispatcher options to the intake.
    expect(() => run({} as never, { dispatcher: 5 } as never)).toThrow(TypeError);
    expect(() => run({} as never, { dispatcher: { maxActivePrincipals: 0 } })).toThrow(
      /maxActivePrincipals/,
    );
  });
});

describe("run(bot) when it cannot finish or cannot poll", () => {
  it("stop() gives up at stopTimeoutMs and leaves the update in the journal", async () => {
    const journal = new MemoryUpdateJournal();
    f = await fixture();
    const { sim, bot } = f;
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    bot.on("message", () => new Promise<void>(() => {}));
    runner = run(bot, { journal, pollTimeoutSeconds: 1, stopTimeoutMs: 50 });
    sim.sendText(user, chat, "never finishes");
    await eventually("stored", () => runner?.snapshot().unfinished === 1);
    expect(await runner.stop()).toEqual({ status: "timed-out", unfinished: 1 });
    expect(await journal.unfinished()).toHaveLength(1);
  });

  it("task() rejects with PollingStoppedError when another poller takes over", async () => {
    f = await fixture();
    runner = run(f.bot, { pollTimeoutSeconds: 5 });
    await eventually("polling", () => runner?.snapshot().state === "polling");
    await sleep(20);
    const rival = new Bot(f.sim.token, { client: { apiRoot: f.sim.apiRoot } });
    const rivalPoll = rival.api.getUpdates({ timeout: 0 }).catch(() => []);
    const error = await runner.task().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PollingStoppedError);
    expect(error).toMatchObject({ code: "ERR_POLLING_CONFLICT" });
    expect(runner.isRunning()).toBe(false);
    await rivalPoll;
  });
});

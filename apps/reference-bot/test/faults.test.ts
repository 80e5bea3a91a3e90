// Faults between the bot and the Bot API: a 429 storm earned by an outbox paced faster than the
// sim allows, injected 429s, and 5xx answers (random and aimed at final messages). Every job's
// final message arrives exactly once.

import type { Chat, Message, User } from "@grammyjs/types";
import type { BotApiSim } from "@telepace/bot-api-sim";
import { describe, expect, it } from "vitest";
import {
  cancelData,
  E2E_TIMEOUT_MS,
  eventually,
  type Fixture,
  launchFixture,
  replyTo,
  SCALED_OUTBOX,
  TIME_SCALE,
  textOf,
} from "./harness.js";

interface Job {
  readonly user: User;
  readonly chat: Chat;
}

/** A seeded PRNG (mulberry32), so the sim's random faults repeat from run to run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Eight jobs: one in each of five private chats, and three in a group of three of the users. */
function crowd(sim: BotApiSim): Job[] {
  const users = ["Ada", "Boris", "Chen", "Dana", "Emil"].map((firstName) =>
    sim.users.create({ firstName }),
  );
  const jobs: Job[] = users.map((user) => ({ user, chat: sim.chats.createPrivate(user) }));
  const group = sim.chats.createGroup({ title: "Team", members: users.slice(0, 3) });
  for (const user of users.slice(0, 3)) jobs.push({ user, chat: group });
  return jobs;
}

function startJobs(sim: BotApiSim, jobs: readonly Job[], seconds: number) {
  return jobs.map((job) => sim.sendCommand(job.user, job.chat, "work", String(seconds)));
}

/** Whether `message` is the progress message of the job `command` started. */
function isProgressFor(message: Message, command: Message): boolean {
  const repliesTo = (message as { reply_to_message?: Message }).reply_to_message?.message_id;
  return cancelData(message) !== undefined && repliesTo === command.message_id;
}

const endedJobs = (fixture: Fixture) =>
  Object.values(fixture.bot.stats().jobs.ended).reduce((sum, n) => sum + n, 0);

/**
 * After the bot stopped (nothing more can arrive): each job's final is in its chat exactly once,
 * and no progress message is left behind.
 */
function expectOneFinalPerJob(sim: BotApiSim, jobs: readonly Job[]): void {
  for (const job of jobs) {
    const texts = sim.transcript(job.chat).messages.map(textOf);
    const finals = texts.filter((text) => text.startsWith(`Done, ${job.user.first_name}:`));
    expect(finals, `${job.user.first_name} in chat ${job.chat.id}`).toHaveLength(1);
    expect(texts.filter((text) => text.startsWith("Working…"))).toEqual([]);
  }
}

describe("faults", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("a 429 storm from an outbox faster than the limits loses no final and duplicates none", async () => {
    // Private chats at ten times the pace the sim allows, and 50 progress edits a second per job.
    // (The group keeps its pace: a storm there sits out the sliding minute, seconds even scaled.)
    await using fixture = await launchFixture({
      bot: {
        progressHz: 50,
        outbox: { ...SCALED_OUTBOX, privateChatRps: 10 * TIME_SCALE, globalRps: 300 * TIME_SCALE },
      },
    });
    const { sim, bot } = fixture;
    const jobs = crowd(sim);
    startJobs(sim, jobs, 1);
    await eventually("every job has ended", () => endedJobs(fixture) === jobs.length);
    await bot.stop();

    expect(sim.counters().tooManyRequests).toBeGreaterThan(0);
    expect(bot.stats().outbox.rateLimited).toBe(sim.counters().tooManyRequests);
    expect(bot.stats().jobs.ended).toMatchObject({ done: jobs.length, undeliverable: 0 });
    expectOneFinalPerJob(sim, jobs);
  });

  it("injected 429s and random 5xx lose no final and duplicate none", async () => {
    await using fixture = await launchFixture({ sim: { random: seeded(7) } });
    const { sim, bot } = fixture;
    const jobs = crowd(sim);
    // Retry-safe calls fail at random; sends earn 429s that the outbox must sit out.
    sim.faults.setErrorRate(0.2, {
      code: 502,
      methods: ["getUpdates", "editMessageText", "deleteMessage"],
    });
    sim.faults.failNext("sendMessage", 4, { code: 429, retryAfter: 2 / TIME_SCALE });
    startJobs(sim, jobs, 1);
    await eventually("every job has ended", () => endedJobs(fixture) === jobs.length);
    await bot.stop();

    expect(sim.counters().faultsInjected).toBeGreaterThan(4);
    expect(bot.stats().outbox.rateLimited).toBeGreaterThanOrEqual(4);
    expect(bot.stats().jobs.ended).toMatchObject({ done: jobs.length, undeliverable: 0 });
    expectOneFinalPerJob(sim, jobs);
  });

  it("a final whose send answers 5xx still arrives once: the progress message becomes it", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const jobs = crowd(sim);
    const sent = startJobs(sim, jobs, 1);
    await Promise.all(
      jobs.map((job, i) => {
        const command = sent[i] as Message;
        return replyTo(sim, job.chat, command, (m) => isProgressFor(m, command));
      }),
    );
    // Every progress message is out, so the next sends are the finals: fail the first three.
    sim.faults.failNext("sendMessage", 3, { code: 500 });
    await eventually("every job has ended", () => endedJobs(fixture) === jobs.length);
    await bot.stop();

    expect(sim.counters().faultsInjected).toBe(3);
    expect(bot.stats().jobs.ended).toMatchObject({ done: jobs.length, undeliverable: 0 });
    expectOneFinalPerJob(sim, jobs);
    // Three finals are their progress messages edited (the keyboard gone); the rest are new.
    // Each chat once: the group holds three jobs, and which finals fail depends on timing.
    const chats = new Set(jobs.map((job) => job.chat));
    const edited = [...chats].flatMap((chat) =>
      sim.transcript(chat).messages.filter((m) => textOf(m).startsWith("Done") && "edit_date" in m),
    );
    expect(edited).toHaveLength(3);
    expect(edited.every((message) => cancelData(message) === undefined)).toBe(true);
  });

  it("a final whose send took effect but answered 5xx is shown twice rather than lost", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const sent = sim.sendCommand(alice, chat, "work", "1");
    await replyTo(sim, chat, sent, (m) => cancelData(m) !== undefined);
    sim.faults.failNext("sendMessage", 1, { code: 500, afterProcessing: true });
    await eventually("the job has ended", () => endedJobs(fixture) === 1);
    await bot.stop();

    // The bot cannot tell a delivered send from a lost one; it keeps the final rather than risk
    // losing it, so the user sees it twice (the new message, and the progress message edited).
    const finals = sim.transcript(chat).messages.filter((m) => textOf(m).startsWith("Done, Alice"));
    expect(finals).toHaveLength(2);
    expect(bot.stats().jobs.ended.done).toBe(1);
  });

  it("a job whose progress message fails to send says so instead of never starting", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    sim.faults.failNext("sendMessage", 1, { code: 500 });
    const sent = sim.sendCommand(alice, chat, "work", "1");
    const reply = await replyTo(sim, chat, sent, (m) => textOf(m).includes("could not start"));
    expect(textOf(reply)).toBe("I could not start that job; please send /work again.");
    expect(bot.stats().jobs).toMatchObject({ started: 0, refused: 1 });
  });
});

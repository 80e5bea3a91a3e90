// `pnpm --filter @telepace/reference-bot demo:processes -- [--processes N] [--users N]
// [--messages N]`: the reference bot as several processes of one token on one Redis (REDIS_URL, or
// a redis-server from PATH on a free port with an append-only file), against one sim. Once every
// process serves, a crowd writes numbered messages, some start /work jobs and press Cancel (on
// whichever process takes the press), and one process is killed with SIGKILL while it runs a job
// and holds people's updates. The report says whether every reply came once and in order, how the
// jobs ended, how long the people and the job of the killed process waited, and the 429s.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { Chat, Message, User } from "@grammyjs/types";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { createDeferred, systemClock } from "@telepace/core";
import { botIdOf, RedisUpdateQueue } from "@telepace/redis";
import { hasRedisServer, REDIS_INSTALL_HINT, startRedis } from "@telepace/testing";
import { BotProcess } from "./bot-process.js";
import {
  echoFigures,
  formatProcessesReport,
  type KillRecord,
  type ProcessesExpectation,
  ProcessesTally,
} from "./processes-report.js";
import { unreconciled } from "./report.js";
import { maxInWindow } from "./send-rates.js";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));
const COMMAND = [process.execPath, "--conditions=@telepace/source", "--import", "tsx", MAIN];
/** The job of the person whose process is killed, in s: long enough to be mid-way at the kill. */
const VICTIM_JOB_S = 60;
const CANCELLED_JOB_S = 15;
/** How long after its progress message shows a job's user presses Cancel, ms. */
const CANCEL_AFTER_MS = 2_000;
/**
 * The crowd writes in rounds this far apart, two messages a person each: the second reply waits
 * for the chat's 1 s, so the processes hold people's updates at any moment.
 */
const ROUND_SPACING_MS = 2_000;
const WAIT_MS = 90_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function textOf(message: Message): string {
  return "text" in message ? message.text : "";
}

function count(name: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`--${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** Redis from REDIS_URL, or one started here (durable, so the bot has nothing to warn about). */
async function redisForDemo(): Promise<
  { readonly url: string; readonly describe: string; stop(): Promise<void> } | undefined
> {
  const given = process.env.REDIS_URL;
  if (given !== undefined && given !== "") {
    return { url: given, describe: "the Redis in REDIS_URL", stop: async () => {} };
  }
  if (!hasRedisServer()) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "telepace-processes-"));
  const server = await startRedis({ args: ["--appendonly", "yes", "--dir", dir] });
  return {
    url: server.url,
    describe: "a redis-server on a free port with an append-only file",
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Person {
  readonly user: User;
  readonly chat: Chat;
}

async function main(): Promise<number> {
  // pnpm passes the `--` that separates its own flags through.
  const argv = process.argv.slice(2);
  const { values } = parseArgs({
    args: argv[0] === "--" ? argv.slice(1) : argv,
    options: {
      processes: { type: "string", default: "3" },
      users: { type: "string", default: "12" },
      messages: { type: "string", default: "6" },
    },
  });
  const processCount = count("processes", values.processes, 2, 8);
  const users = count("users", values.users, 4, 200);
  const messages = count("messages", values.messages, 1, 50);
  const redis = await redisForDemo();
  if (redis === undefined) {
    process.stderr.write(
      `No REDIS_URL and no redis-server on PATH; install one: ${REDIS_INSTALL_HINT}\n`,
    );
    return 1;
  }
  const sim = await start();
  const tally = new ProcessesTally();
  const startedAt = performance.now();
  const processes: BotProcess[] = [];
  try {
    process.stderr.write(
      `Bot API sim on ${sim.apiRoot} with Telegram's limits; ${processCount} bot processes on ${redis.describe}…\n`,
    );
    processes.push(
      ...(await Promise.all(
        Array.from({ length: processCount }, (_, index) =>
          BotProcess.start({
            apiRoot: sim.apiRoot,
            token: sim.token,
            logLevel: "error",
            command: COMMAND,
            // The URL in the environment, never in the arguments (`ps` shows those).
            env: { REDIS_URL: redis.url },
            onMessage: (message) => tally.record(index + 1, message, systemClock.now()),
          }),
        ),
      )),
    );
    process.stderr.write(
      `Every process serves; ${users} people write ${messages} messages each…\n`,
    );
    const run = await playCrowd(sim, processes, tally, redis.url, {
      users,
      messages,
      startedAt,
    });
    await Promise.all(processes.map((each) => each.stop()));
    const chatIds = run.people.map((person) => person.chat.id);
    const figures = echoFigures(sim, chatIds);
    const events = [...chatIds, run.groupId].flatMap((id) => sim.transcript(id).events);
    const report = formatProcessesReport(sim, {
      processes: processes.map((each) => ({ pid: each.pid })),
      redis: redis.describe,
      elapsedS: (performance.now() - startedAt) / 1000,
      expectations: run.expectations,
      tally,
      kill: run.kill,
      ...figures,
      busiestSecond: maxInWindow(events, 1_000),
    });
    process.stdout.write(`${report}\n`);
    const sound =
      run.expectations.every((e) => e.met) &&
      figures.outOfOrder === 0 &&
      sim.counters().tooManyRequests === 0 &&
      sim.counters().updatesQueued === tally.ledger.updatesHandled &&
      unreconciled(report).length === 0;
    return sound ? 0 : 1;
  } finally {
    await Promise.all(processes.map((each) => each.kill()));
    await sim.close();
    await redis.stop();
  }
}

/** The crowd, the Cancel presses and the kill; resolves once every expectation settled. */
async function playCrowd(
  sim: BotApiSim,
  processes: readonly BotProcess[],
  tally: ProcessesTally,
  redisUrl: string,
  size: { readonly users: number; readonly messages: number; readonly startedAt: number },
) {
  const people: Person[] = Array.from({ length: size.users }, (_, i) => {
    const user = sim.users.create({ firstName: `Person${i}` });
    return { user, chat: sim.chats.createPrivate(user) };
  });
  const group = sim.chats.createGroup({ members: people.slice(0, 4).map((p) => p.user) });
  const expectations: ProcessesExpectation[] = [];
  const waits: Promise<void>[] = [];
  const expectReply = (
    kind: ProcessesExpectation["kind"],
    chatId: number,
    matches: (text: string) => boolean,
  ): Promise<void> => {
    const expectation: ProcessesExpectation = { kind, chatId, matches, met: false };
    expectations.push(expectation);
    const settled = sim
      .waitForMessage(chatId, (m) => matches(textOf(m)), { timeoutMs: WAIT_MS })
      .then(
        () => {
          expectation.met = true;
        },
        () => {},
      );
    waits.push(settled);
    return settled;
  };
  const victim = people[0] as Person;
  const sentVictimJob = sim.sendCommand(victim.user, victim.chat, "work", String(VICTIM_JOB_S));
  expectReply("interrupted", victim.chat.id, (text) =>
    text.startsWith(`Interrupted, ${victim.user.first_name}: the bot process running your`),
  );
  // One person in four starts a job and presses Cancel once it shows progress: the press lands
  // on whichever process claims it.
  const cancelled: Promise<void>[] = [];
  for (const person of people.filter((_, i) => i % 4 === 2)) {
    cancelled.push(
      expectReply("cancel", person.chat.id, (text) =>
        new RegExp(`^Cancelled, ${person.user.first_name}, at \\d+%\\.$`).test(text),
      ),
    );
    waits.push(pressCancelMidway(sim, person, CANCELLED_JOB_S));
  }
  const mentions = (async () => {
    for (let k = 0; k < 2; k++) {
      const text = `@${sim.bot.username} hello ${k}`;
      expectReply("group", group.id, (reply) => reply === `You said: ${text}`);
      sim.sendText(people[1]?.user as User, group, text);
      await sleep(6_000);
    }
  })();
  const lastRound = createDeferred<void>();
  const writing = (async () => {
    for (let k = 0; k < size.messages; k += 2) {
      if (k + 2 >= size.messages) {
        // The kill comes while the last round is answered, and a second after the cancelled jobs'
        // endings arrived (so their records are gone: a kill in between would have a survivor
        // end such a job again, at least once).
        await Promise.all(cancelled).then(() => sleep(1_000));
        lastRound.resolve();
      }
      for (const person of people) {
        for (const n of [k, k + 1].filter((each) => each < size.messages)) {
          expectReply("echo", person.chat.id, (text) => text === `You said: message ${n}`);
          sim.sendText(person.user, person.chat, `message ${n}`);
        }
      }
      await sleep(ROUND_SPACING_MS);
    }
  })();
  const kill = await killVictimProcess(sim, processes, tally, redisUrl, {
    victim,
    sentJob: sentVictimJob,
    startedAt: size.startedAt,
    lastRound: lastRound.promise,
    writeAfterKill: () => {
      const user = sim.users.create({ firstName: "Latecomer" });
      const chat = sim.chats.createPrivate(user);
      expectReply("echo", chat.id, (text) => text === "You said: after the kill");
      sim.sendText(user, chat, "after the kill");
    },
  });
  await Promise.all([writing, mentions, ...waits]);
  return { people, groupId: group.id, expectations, kill };
}

/**
 * Starts a job for `person` and presses Cancel a while after its progress message showed. A press
 * that cannot be made (the job ended first) leaves the expectation unmet.
 */
async function pressCancelMidway(sim: BotApiSim, person: Person, seconds: number): Promise<void> {
  const sent = sim.sendCommand(person.user, person.chat, "work", String(seconds));
  try {
    const progress = await sim.waitForMessage(
      person.chat,
      (m) => textOf(m).startsWith("Working…"),
      { afterMessageId: sent.message_id, timeoutMs: WAIT_MS },
    );
    await sleep(CANCEL_AFTER_MS);
    const button = progress.reply_markup?.inline_keyboard[0]?.[0];
    if (button !== undefined && "callback_data" in button) {
      sim.pressButton(
        person.user,
        person.chat,
        progress.message_id,
        button.callback_data as string,
      );
    }
  } catch (error) {
    process.stderr.write(`${person.user.first_name} could not press Cancel: ${String(error)}\n`);
  }
}

/**
 * Waits until the victim's job runs and a few replies went out, then kills the process running the
 * job and times what its people and its job waited.
 */
async function killVictimProcess(
  sim: BotApiSim,
  processes: readonly BotProcess[],
  tally: ProcessesTally,
  redisUrl: string,
  scene: {
    readonly victim: Person;
    readonly sentJob: Message;
    readonly startedAt: number;
    /** Resolves when the crowd writes its last round: the kill comes while it is answered. */
    readonly lastRound: Promise<void>;
    /** Someone writes after the kill of the poller, so that another process must poll. */
    readonly writeAfterKill: () => void;
  },
): Promise<KillRecord | undefined> {
  const { victim, sentJob } = scene;
  const progress = await sim.waitForMessage(victim.chat, (m) => textOf(m).startsWith("Working…"), {
    afterMessageId: sentJob.message_id,
    timeoutMs: WAIT_MS,
  });
  const button = progress.reply_markup?.inline_keyboard[0]?.[0];
  const jobId =
    button !== undefined && "callback_data" in button
      ? String(button.callback_data).slice("cancel:".length)
      : "";
  // Mid-job, while the crowd's last round is answered: the process holds people's updates.
  await scene.lastRound.then(() => sleep(300));
  const index = tally.processOfJob(jobId);
  const doomed = index === undefined ? undefined : processes[index - 1];
  if (doomed === undefined || index === undefined) return undefined;
  const wasPoller = tally.lastPoller === index;
  const heldJobs = tally.runningJobsOf(index);
  // The sim's transcripts are on the system clock: the kill is timed on it too.
  const killedAt = systemClock.now();
  await doomed.kill();
  // The crowd has written its last: without a later update no poll after the kill would show.
  if (wasPoller) scene.writeAfterKill();
  const queue = new RedisUpdateQueue({ redis: redisUrl, botId: botIdOf(sim.token) });
  const held = await queue.updatesOwnedBy(doomed.ready.workerId ?? "").finally(() => queue.close());
  const heldChats = [...new Set(held.flatMap((u) => (u.message ? [u.message.chat.id] : [])))];
  const sinceKill = (chatId: number) =>
    sim
      .transcript(chatId)
      .events.find((e) => e.actor === "bot" && e.kind === "send" && e.atMs > killedAt)?.atMs;
  const deadline = performance.now() + WAIT_MS;
  let jobsEndedAt: number | undefined;
  let pollingAt: number | undefined;
  while (performance.now() < deadline) {
    if (jobsEndedAt === undefined && tally.runningJobsOf(index) === 0) {
      jobsEndedAt = systemClock.now();
    }
    const fetched = tally.fetchedByOtherThan(index);
    if (pollingAt === undefined && fetched !== undefined && fetched > killedAt) pollingAt = fetched;
    if (
      jobsEndedAt !== undefined &&
      (!wasPoller || pollingAt !== undefined) &&
      heldChats.every((id) => sinceKill(id) !== undefined)
    )
      break;
    await sleep(20);
  }
  const replies = heldChats.map((id) => sinceKill(id));
  return {
    process: index,
    pid: doomed.pid,
    atS: (killedAt - scene.startedAt) / 1000,
    wasPoller,
    heldChats: heldChats.length,
    heldUpdates: held.length,
    heldJobs,
    repliesAgainAfterMs: replies.some((at) => at === undefined)
      ? undefined
      : heldChats.length === 0
        ? 0
        : Math.max(...(replies as number[])) - killedAt,
    jobsEndedAfterMs: jobsEndedAt === undefined ? undefined : jobsEndedAt - killedAt,
    pollingAfterMs: pollingAt === undefined ? undefined : pollingAt - killedAt,
  };
}

process.exit(await main());

// The bot as several processes of one token (`--redis <url> --role all`), from the command line:
// two child processes against the sim and one real redis-server answer every person in order,
// exactly once, with no 429, and each serves its own token-free metrics.

import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { describeWithRedis } from "@telepace/testing";
import { expect, it } from "vitest";
import { type BotChild, eventually, METRICS_LINE, spawnBot } from "./harness.js";

const PEOPLE = 12;
const MESSAGES = 3;

interface BotProcess extends BotChild {
  readonly metricsUrl: string;
}

/** Starts one process and waits for the lines that say it serves and where its metrics are. */
async function launch(sim: BotApiSim, redisUrl: string): Promise<BotProcess> {
  const bot = spawnBot(sim, ["--redis", redisUrl, "--role", "all", "--metrics-port", "0"]);
  await bot.line(/^@\w+ is running against .* as one of several processes \(role all, shared/);
  return { ...bot, metricsUrl: (await bot.line(METRICS_LINE))[1] as string };
}

/** The value of the sample of `name` without labels (the scope's labels aside). */
function sample(text: string, name: string): number {
  const line = text
    .split("\n")
    .find((each) => each.startsWith(`${name}{`) || each.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no sample ${name} in the scrape`);
  return Number(line.slice(line.lastIndexOf(" ") + 1));
}

/** Sum of every sample of `name` whose labels include `label`. */
function total(text: string, name: string, label: string): number {
  return text
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`) && line.includes(label))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

describeWithRedis("the bot as two processes on one Redis", (server) => {
  it("answers everyone once, in order, without a 429, and serves metrics per process", async () => {
    const sim = await start();
    const processes: BotProcess[] = [];
    try {
      processes.push(await launch(sim, server().url), await launch(sim, server().url));
      const people = Array.from({ length: PEOPLE }, (_, index) =>
        sim.users.create({ firstName: `Person ${index}` }),
      );
      const chats = people.map((person) => sim.chats.createPrivate(person));
      for (let round = 0; round < MESSAGES; round++) {
        people.forEach((person, index) => {
          sim.sendText(person, chats[index] as never, `message ${round}`);
        });
      }
      const repliesIn = (index: number): number[] =>
        sim
          .transcript(chats[index] as never)
          .events.filter((event) => event.actor === "bot" && event.kind === "send")
          .map((event) => Number(/message (\d+)/.exec(event.text ?? "")?.[1] ?? -1));
      await eventually("every message answered", () =>
        people.every((_, index) => repliesIn(index).length >= MESSAGES),
      );
      for (let index = 0; index < PEOPLE; index++) {
        // Exactly once each, in the order the person wrote.
        expect(repliesIn(index)).toEqual([0, 1, 2]);
      }
      expect(sim.counters().tooManyRequests).toBe(0);

      // A worker marks an update done in Redis a moment after its reply went out.
      const completed = async (): Promise<number> => {
        let sum = 0;
        for (const bot of processes) {
          const text = await (await fetch(bot.metricsUrl)).text();
          sum += sample(text, "telepace_shared_worker_updates_completed_total");
        }
        return sum;
      };
      await eventually(
        "every update completed",
        async () => (await completed()) === PEOPLE * MESSAGES,
      );
      await eventually("the shared backlog empty", async () => {
        const text = await (await fetch((processes[0] as BotProcess).metricsUrl)).text();
        return sample(text, "telepace_shared_queue_unfinished") === 0;
      });
      let delivered = 0;
      for (const bot of processes) {
        const response = await fetch(bot.metricsUrl);
        expect(response.status).toBe(200);
        const text = await response.text();
        expect(text).not.toContain(sim.token);
        expect(text).not.toContain(sim.token.slice(sim.token.indexOf(":") + 1));
        delivered += total(
          text,
          "telepace_outbox_ops_settled_total",
          'telepace_outcome="delivered"',
        );
      }
      // Each process reports the writes it made; together they made every reply.
      expect(delivered).toBe(PEOPLE * MESSAGES);

      for (const bot of processes) bot.child.kill("SIGTERM");
      expect(await Promise.all(processes.map((bot) => bot.exited))).toEqual([0, 0]);
    } finally {
      for (const bot of processes) if (bot.child.exitCode === null) bot.child.kill("SIGKILL");
      await sim.close();
    }
  }, 60_000);
});

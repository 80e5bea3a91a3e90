// The README's first example, examples/shared-bot.ts (shown there verbatim), run as a user runs
// it: processes of one bot, children against the Bot API simulator over loopback and a real
// redis-server. The first answers; SIGTERM stops it (exit 0) and gives the polling up, so the
// second, started meanwhile, polls and answers the next person; each text is answered once.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { describeWithRedis } from "@telepace/testing";
import { expect, it } from "vitest";

const example = fileURLToPath(new URL("../examples/shared-bot.ts", import.meta.url));

interface Run {
  readonly child: ChildProcess;
  readonly exited: Promise<unknown[]>;
  readonly stderr: string[];
}

function run(sim: BotApiSim, redisUrl: string): Run {
  const child = spawn(
    process.execPath,
    ["--conditions=@telepace/source", "--import", "tsx", example],
    {
      env: {
        ...process.env,
        TELEGRAM_BOT_TOKEN: sim.token,
        TELEGRAM_API_ROOT: sim.apiRoot,
        REDIS_URL: redisUrl,
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  const stderr: string[] = [];
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
  return { child, exited: once(child, "exit"), stderr };
}

describeWithRedis("the README's Usage", (server) => {
  it("a process answers; on SIGTERM it exits 0 and another polls on", {
    timeout: 30_000,
  }, async () => {
    const sim = await start();
    const runs: Run[] = [];
    const says = (name: string, text: string) => {
      const person = sim.users.create({ firstName: name });
      const chat = sim.chats.createPrivate(person);
      const sent = sim.sendText(person, chat, text);
      return sim.waitForMessage(chat, undefined, {
        afterMessageId: sent.message_id,
        timeoutMs: 20_000,
      });
    };
    try {
      const first = run(sim, server().url);
      runs.push(first);
      expect((await says("Ada", "hello")).text).toBe("You said: hello");
      const second = run(sim, server().url);
      runs.push(second);
      first.child.kill("SIGTERM");
      expect(await first.exited).toEqual([0, null]);
      expect((await says("Bo", "still there?")).text).toBe("You said: still there?");
      second.child.kill("SIGTERM");
      expect(await second.exited).toEqual([0, null]);
      expect(runs.map(({ stderr }) => stderr.join(""))).toEqual(["", ""]);
      expect(sim.counters().calls.sendMessage).toBe(2);
    } finally {
      for (const { child } of runs) if (child.exitCode === null) child.kill("SIGKILL");
      await sim.close();
    }
  });
});

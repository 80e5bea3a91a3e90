// `pnpm --filter @telepace/reference-bot demo:processes [--processes N] [--users N] [--messages N]`:
// the reference bot as several processes (`--redis <url> --role all`) against one sim and one
// Redis. Uses REDIS_URL, or starts redis-server from PATH on a free loopback port. Kills one
// process with SIGKILL halfway, then reports replies, order and 429s.

import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { start } from "@telepace/bot-api-sim";
import { hasRedisServer, REDIS_INSTALL_HINT, startRedis } from "@telepace/testing";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      processes: { type: "string", default: "3" },
      users: { type: "string", default: "20" },
      messages: { type: "string", default: "5" },
    },
  });
  const processes = Number(values.processes);
  const users = Number(values.users);
  const messages = Number(values.messages);
  let redisUrl = process.env.REDIS_URL;
  const server = redisUrl === undefined && hasRedisServer() ? await startRedis() : undefined;
  redisUrl ??= server?.url;
  if (redisUrl === undefined) {
    process.stderr.write(
      `No REDIS_URL and no redis-server on PATH; install one: ${REDIS_INSTALL_HINT}\n`,
    );
    return 1;
  }
  const sim = await start();
  const children: ChildProcess[] = [];
  try {
    for (let index = 0; index < processes; index++) {
      children.push(
        spawn(
          process.execPath,
          [
            "--conditions=@telepace/source",
            "--import",
            "tsx",
            MAIN,
            "--redis",
            redisUrl,
            "--role",
            "all",
          ],
          {
            env: {
              ...process.env,
              TELEGRAM_BOT_TOKEN: sim.token,
              TELEGRAM_API_ROOT: sim.apiRoot,
              LOG_LEVEL: "error",
            },
            stdio: ["ignore", "inherit", "inherit"],
          },
        ),
      );
    }
    const people = Array.from({ length: users }, (_, i) =>
      sim.users.create({ firstName: `u${i}` }),
    );
    const chats = people.map((person) => sim.chats.createPrivate(person));
    const startedAt = performance.now();
    for (let n = 0; n < messages; n++) {
      people.forEach((person, i) => {
        sim.sendText(person, chats[i] as never, `message ${n}`);
      });
      if (n === Math.floor(messages / 2)) {
        await sleep(1_000);
        children[0]?.kill("SIGKILL");
        process.stderr.write("killed process 1 with SIGKILL\n");
      }
    }
    const replies = () =>
      chats.map((chat) =>
        sim
          .transcript(chat)
          .events.filter((e) => e.actor === "bot" && e.kind === "send")
          .map((e) => e.text ?? ""),
      );
    const deadline = performance.now() + 120_000;
    while (performance.now() < deadline) {
      const got = replies();
      if (got.every((texts) => new Set(texts).size >= messages)) break;
      await sleep(100);
    }
    const got = replies();
    const answered = got.reduce((sum, texts) => sum + new Set(texts).size, 0);
    const outOfOrder = got.filter((texts) => {
      const order = texts.map((text) => Number(/message (\d+)/.exec(text)?.[1] ?? -1));
      return order.some((value, i) => i > 0 && value < (order[i - 1] as number));
    }).length;
    process.stdout.write(
      [
        `${processes} processes, one token, one Redis; ${users} people × ${messages} messages`,
        `answered ${answered} of ${users * messages} in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`,
        `chats out of order: ${outOfOrder}; 429s: ${sim.counters().tooManyRequests}`,
        "",
      ].join("\n"),
    );
    return answered === users * messages && outOfOrder === 0 ? 0 : 1;
  } finally {
    for (const child of children) child.kill("SIGTERM");
    await Promise.all(
      children.map((child) =>
        child.exitCode === null && child.signalCode === null
          ? new Promise((resolve) => child.once("exit", resolve))
          : undefined,
      ),
    );
    await sim.close();
    await server?.stop();
  }
}

process.exit(await main());

// The README's Usage block, verbatim, compiled under the package's strict tsconfig (typecheck
// covers test/) and run against the sim and a real redis-server. A test keeps the copies equal.

import { readFileSync } from "node:fs";
import { start } from "@telepace/bot-api-sim";
import { TelegramClient } from "@telepace/client";
import { describeWithRedis } from "@telepace/testing";
import { expect, it } from "vitest";
import {
  botIdOf,
  RedisPacingStore,
  RedisUpdateQueue,
  SharedPoller,
  SharedUpdateWorker,
} from "../src/index.js";

/** Runs the README's Usage until SIGTERM. */
async function readmeUsage(): Promise<void> {
  // README:usage-start
  const token = process.env.TELEGRAM_BOT_TOKEN ?? "";
  const redis = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const botId = botIdOf(token); // keys name the bot by its id, never by its token

  // Writes: one pacing state for the whole bot.
  const pacingStore = new RedisPacingStore({ redis, botId });
  const client = new TelegramClient({
    token,
    apiRoot: process.env.TELEGRAM_API_ROOT, // optional: a local Bot API server or the telepace sim
    outbox: { pacingStore },
  });

  // Reads: one queue; one process polls (elected), every process works.
  const queue = new RedisUpdateQueue({ redis, botId });
  const poller = new SharedPoller(queue, {
    getUpdates: (params, options) => client.getUpdates(params, options),
  });
  const worker = new SharedUpdateWorker(queue, async (update, signal) => {
    const message = update.message;
    if (message?.text !== undefined) {
      // Await the reply: the person's next update is claimed only once this one is done.
      await client.sendMessage(message.chat.id, `You said: ${message.text}`, {}, { signal });
    }
  });

  const shutdown = new AbortController();
  process.once("SIGTERM", () => shutdown.abort());
  await Promise.all([
    poller.run({ signal: shutdown.signal }),
    worker.run({ signal: shutdown.signal }),
  ]);
  await worker.close({ timeoutMs: 10_000 });
  await client.close();
  await Promise.all([queue.close(), pacingStore.close()]);
  // README:usage-end
}

describeWithRedis("the README's Usage", (server) => {
  it("runs as written: the bot answers, SIGTERM stops it", async () => {
    await using sim = await start();
    process.env.TELEGRAM_BOT_TOKEN = sim.token;
    process.env.TELEGRAM_API_ROOT = sim.apiRoot;
    process.env.REDIS_URL = server().url;
    const running = readmeUsage();
    const person = sim.users.create({ firstName: "Ada" });
    const chat = sim.chats.createPrivate(person);
    sim.sendText(person, chat, "hello");
    const reply = await sim.waitForMessage(chat, undefined, { timeoutMs: 10_000 });
    expect(reply.text).toBe("You said: hello");
    process.emit("SIGTERM");
    await running;
  });
});

it("the README's Usage block is the code above", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block = /Every process of the bot runs the same code:\n\n```ts\n([\s\S]*?)```/.exec(
    readme,
  )?.[1];
  const source = readFileSync(new URL(import.meta.url), "utf8");
  const body = /\/\/ README:usage-start\n([\s\S]*?)\n {2}\/\/ README:usage-end/.exec(source)?.[1];
  const dedented = body
    ?.split("\n")
    .map((line) => line.replace(/^ {2}/, ""))
    .join("\n");
  expect(block?.endsWith(`${dedented}\n`)).toBe(true);
});

// One process of a bot run as several on one Redis: every write paced through the shared state,
// one elected process polls into the shared queue, every process works on it in per-person order.
// Run the same program as many times as you like:
// TELEGRAM_BOT_TOKEN=… REDIS_URL=redis://… node shared-bot.js, then write to the bot; Ctrl-C stops it.
import { TelegramClient } from "@telepace/client";
import {
  botIdOf,
  RedisPacingStore,
  RedisUpdateQueue,
  SharedPoller,
  SharedUpdateWorker,
} from "@telepace/redis";

const token = process.env.TELEGRAM_BOT_TOKEN;
if (token === undefined) throw new Error("Set TELEGRAM_BOT_TOKEN to the token from @BotFather");
// In the environment, not on the command line, where `ps` would show its password.
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
process.once("SIGINT", () => shutdown.abort());
process.once("SIGTERM", () => shutdown.abort());
try {
  // The poller rejects with PollingStoppedError on 409 (a poller outside this Redis, or a
  // webhook) and 401/404 (a bad token): this process then stops as on Ctrl-C.
  await Promise.all([
    poller.run({ signal: shutdown.signal }).finally(() => shutdown.abort()),
    worker.run({ signal: shutdown.signal }),
  ]);
} finally {
  // Updates still running get 10 s; the rest pass to another process after their lease.
  await worker.close({ timeoutMs: 10_000 });
  await client.close();
  await Promise.all([queue.close(), pacingStore.close()]);
}

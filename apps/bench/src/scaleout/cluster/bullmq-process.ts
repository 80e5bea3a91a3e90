// One process of the BullMQ peer: a grammY bot whose handler enqueues each echo as a BullMQ job,
// and a BullMQ Worker that sends the jobs through grammY's API under BullMQ's rate limiter, which
// every process's Worker shares through Redis (one queue per run). It gets its updates as the
// throttler peer does (a webhook behind a load balancer that routes by chat; the parent sends them
// over IPC). A 429 rate-limits the whole queue for its `retry_after` and puts the job back, as
// BullMQ's docs show for an API that answers 429. Serves run after run (process-host.ts).

import { Queue, Worker } from "bullmq";
import { Bot, GrammyError } from "grammy";
import { type HostedRun, serveRuns } from "./process-host.js";
import type { PeerConfig, PeerStats } from "./process-messages.js";
import { UpdateCounter } from "./update-counter.js";

/** Telegram's global limit, given to BullMQ's limiter as telepace and Bottleneck get it. */
const LIMITER = { max: 30, duration: 1_000 } as const;

interface SendJob {
  readonly chatId: number;
  readonly text: string;
}

async function startRun(config: PeerConfig): Promise<HostedRun<PeerStats>> {
  const redisUrl = new URL(config.redisUrl);
  const connection = { host: redisUrl.hostname, port: Number(redisUrl.port) };
  const bot = new Bot(config.token, { client: { apiRoot: config.apiRoot } });
  const queue = new Queue<SendJob>(config.prefix, {
    connection,
    // Done jobs are not kept: a bot's sends are not worth keeping in Redis.
    defaultJobOptions: { removeOnComplete: true, removeOnFail: 1_000 },
  });
  bot.on("message:text", async (ctx) => {
    await queue.add("sendMessage", { chatId: ctx.chat.id, text: `echo ${ctx.message.text}` });
  });
  let completed = 0;
  let failed = 0;
  let isClosed = false;
  // BullMQ's defaults otherwise: concurrency 1, one attempt per job (no retry but the 429's).
  const worker = new Worker<SendJob>(
    config.prefix,
    async (job) => {
      try {
        await bot.api.sendMessage(job.data.chatId, job.data.text);
      } catch (error) {
        if (error instanceof GrammyError && error.error_code === 429) {
          await queue.rateLimit((error.parameters.retry_after ?? 1) * 1_000);
          throw Worker.RateLimitError();
        }
        throw error;
      }
    },
    { connection, limiter: LIMITER },
  );
  worker.on("completed", () => {
    completed++;
  });
  worker.on("failed", () => {
    if (!isClosed) failed++;
  });
  const updates = new UpdateCounter();
  await Promise.all([bot.init(), queue.waitUntilReady(), worker.waitUntilReady()]);
  return {
    getMe: () => bot.api.getMe(),
    handle: (update) => updates.handle(bot, update),
    // A job that could not be enqueued is given up on as much as one that failed.
    stats: () =>
      updates.statsOf(config.name, {
        settled: completed + failed,
        gaveUp: failed + updates.failed,
      }),
    close: async () => {
      isClosed = true;
      updates.isClosed = true;
      // Forced: the jobs in progress are not waited for; the run's queue is left behind.
      await worker.close(true);
      await queue.close();
    },
  };
}

serveRuns(startRun);

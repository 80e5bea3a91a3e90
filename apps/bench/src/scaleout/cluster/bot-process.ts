// One process of a bot that runs as several: a worker of the shared queue that echoes each text
// back, its outbox paced through Redis, and (role "all") a candidate for the poller lease. Started
// by process-pool.ts through tsx and kept for run after run: a "run" message builds the bot for
// that run's sim and keyspace, "end" closes it. Talks to its parent over IPC.

import { TelegramClient } from "@telepace/client";
import {
  botIdOf,
  RedisPacingStore,
  RedisUpdateQueue,
  SharedPoller,
  SharedUpdateWorker,
} from "@telepace/redis";
import { type HostedRun, serveRuns } from "./process-host.js";

export interface NodeConfig {
  readonly name: string;
  readonly role: "all" | "worker";
  readonly redisUrl: string;
  readonly apiRoot: string;
  readonly token: string;
  /** Key prefix: each run its own keyspace (the sim's token, so the bot id, repeats). */
  readonly prefix: string;
  /** The worker lease; undefined: the library's default (renewed five times a lease). */
  readonly leaseMs: number | undefined;
  readonly pollerLeaseMs: number;
  readonly concurrency: number;
  /** false: every process paces alone (an in-memory store), as without @telepace/redis. */
  readonly sharedPacing: boolean;
}

/** What a node reports when asked. */
export interface NodeStats {
  readonly name: string;
  readonly isLeader: boolean;
  readonly claimed: number;
  readonly completed: number;
  readonly handedOver: number;
  readonly rateLimited: number;
  readonly delivered: number;
  /** Sends the outbox settled as failed or refused at its bound: given up on. */
  readonly gaveUp: number;
}

function startRun(config: NodeConfig): HostedRun<NodeStats> {
  const botId = botIdOf(config.token);
  const pacingStore = config.sharedPacing
    ? new RedisPacingStore({ redis: config.redisUrl, botId, prefix: config.prefix })
    : undefined;
  const client = new TelegramClient({
    token: config.token,
    apiRoot: config.apiRoot,
    outbox: { ...(pacingStore === undefined ? {} : { pacingStore }), maxPending: 100_000 },
  });
  const queue = new RedisUpdateQueue({ redis: config.redisUrl, botId, prefix: config.prefix });
  const worker = new SharedUpdateWorker(
    queue,
    async (update) => {
      const text = update.message?.text;
      const chat = update.message?.chat.id;
      if (text === undefined || chat === undefined) return;
      // Awaiting delivery keeps the person's order across processes: their next update is
      // claimed only once this reply was sent.
      await client.sendMessage(chat, `echo ${text}`);
    },
    {
      workerId: config.name,
      concurrency: config.concurrency,
      ...(config.leaseMs === undefined ? {} : { leaseMs: config.leaseMs }),
      idleMs: 5,
    },
  );
  const poller =
    config.role === "all"
      ? new SharedPoller(queue, {
          getUpdates: (params, options) => client.getUpdates(params, options),
          pollerId: config.name,
          leaseMs: config.pollerLeaseMs,
          pollTimeoutSeconds: 5,
        })
      : undefined;
  const close = async () => {
    await poller?.close();
    // Nothing waits for what is in flight: the run is measured, and its sim is about to close.
    await worker.close({ timeoutMs: 0 });
    await client.close({ drain: false, timeoutMs: 0 });
    await queue.close();
    await pacingStore?.close();
  };
  void worker.run();
  // run() rejects when polling must stop (409: a poller outside this run's Redis; 401): the
  // run's figures would mean nothing, so the parent is told why and this process stops.
  poller?.run().catch(async (error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    process.send?.({ type: "failed", reason });
    await close();
    process.exit(1);
  });
  return {
    getMe: () => client.getMe(),
    close,
    stats: () => {
      const counters = client.outbox.snapshot().counters;
      const work = worker.snapshot();
      return {
        name: config.name,
        isLeader: poller?.snapshot().isLeader ?? false,
        claimed: work.claimed,
        completed: work.completed,
        handedOver: work.handedOver,
        rateLimited: counters.rateLimited,
        delivered: counters.delivered,
        gaveUp: counters.failed + counters.rejected,
      };
    },
  };
}

serveRuns(startRun);

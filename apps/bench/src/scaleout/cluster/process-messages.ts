// What the bench and a bot process (bot-process.ts, bottleneck-process.ts, bullmq-process.ts) say
// to each other over IPC: the messages a process takes, and a peer's configuration and stats.

import type { Update } from "@grammyjs/types";

/**
 * What the bench sends a process (each says `up` once it listens): `run` builds the bot for one run (its sim, its keyspace) and is
 * answered `ready`; `update` hands a peer an update; `stats` is answered `stats`; `end` closes the
 * run's bot and is answered `ended` (the process waits for the next `run`); `exit` ends it.
 */
export type ProcessMessage<C> =
  | { readonly type: "run"; readonly config: C }
  | { readonly type: "update"; readonly update: Update }
  | { readonly type: "stats" }
  | { readonly type: "end" }
  | { readonly type: "exit" };

export interface PeerConfig {
  readonly name: string;
  readonly redisUrl: string;
  readonly apiRoot: string;
  readonly token: string;
  /** The run's id in Redis (Bottleneck's limiter ids, BullMQ's queue): every process shares it. */
  readonly prefix: string;
}

/** What a peer process reports when asked. */
export interface PeerStats {
  readonly name: string;
  /** Updates handed to this process. */
  readonly received: number;
  /** Updates whose handler returned or threw. */
  readonly finished: number;
  /** Sends this process made or gave up on for good (a 429 that is retried is neither). */
  readonly sendsSettled: number;
  /** Sends given up on for good: the handler threw, or the job failed. */
  readonly gaveUp: number;
}

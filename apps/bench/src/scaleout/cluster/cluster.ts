// Several processes of one bot against one sim and one Redis: takes them from a process pool
// (or starts its own), starts a run in each, hands the peers' processes their updates, asks them
// for stats, kills them or ends the run and hands them back.

import type { ChildProcess } from "node:child_process";
import type { Update } from "@grammyjs/types";
import type { NodeConfig, NodeStats } from "./bot-process.js";
import type { PeerConfig, PeerStats } from "./process-messages.js";
import { type ClusterStack, ProcessPool } from "./process-pool.js";

export type { ClusterStack } from "./process-pool.js";

/**
 * The reference bot's poller lease (`--poller-lease-ms`), so a run with the defaults hands the
 * polling over as the bot does. The worker's lease is the library's default, which the bot uses.
 */
export const BOT_POLLER_LEASE_MS = 1_500;

export interface ClusterOptions {
  readonly processes: number;
  /** @defaultValue "telepace" */
  readonly stack?: ClusterStack;
  readonly redisUrl: string;
  readonly apiRoot: string;
  readonly token: string;
  /** Key prefix of the run. */
  readonly prefix: string;
  /** The worker lease (the hand-over time after a crash). @defaultValue the library's */
  readonly leaseMs?: number | undefined;
  /** The poller lease. @defaultValue 1500, the reference bot's */
  readonly pollerLeaseMs?: number | undefined;
  /** Updates in processing per process. @defaultValue 32 */
  readonly concurrency?: number;
  /** @defaultValue true */
  readonly sharedPacing?: boolean;
  /** Where the processes come from and go back to; undefined: the cluster's own, closed at stop. */
  readonly pool?: ProcessPool | undefined;
}

export interface ClusterNode {
  readonly name: string;
  readonly child: ChildProcess;
  isAlive: boolean;
}

export class Cluster {
  readonly stack: ClusterStack;
  readonly nodes: ClusterNode[];
  /** Each process's round trip at its start (median of 5 `getMe` through its client), ms. */
  readonly roundTripsMs: readonly number[];
  /** Rejects when a process reports that it stopped on its own (its polling stopped for good). */
  readonly failed: Promise<never>;
  readonly #pool: ProcessPool;
  readonly #ownsPool: boolean;
  /** Listeners of this run on processes that outlive it, removed at stop. */
  readonly #detach: (() => void)[];

  private constructor(
    stack: ClusterStack,
    nodes: ClusterNode[],
    roundTripsMs: number[],
    pool: { readonly pool: ProcessPool; readonly isOwned: boolean },
    failed: Promise<never>,
    detach: (() => void)[],
  ) {
    this.stack = stack;
    this.nodes = nodes;
    this.roundTripsMs = roundTripsMs;
    this.#pool = pool.pool;
    this.#ownsPool = pool.isOwned;
    this.failed = failed;
    this.#detach = detach;
    // Observed only while a run races it; a later failure must not go unhandled.
    this.failed.catch(() => {});
  }

  /** Takes the processes, starts the run in each and resolves once each is ready. */
  static async start(options: ClusterOptions): Promise<Cluster> {
    const stack = options.stack ?? "telepace";
    const pool = options.pool ?? new ProcessPool();
    const children = await pool.take(stack, options.processes);
    const detach: (() => void)[] = [];
    const nodes = children.map((child, index): ClusterNode => {
      const node: ClusterNode = { name: `node${index + 1}`, child, isAlive: true };
      const onExit = () => {
        node.isAlive = false;
      };
      child.once("exit", onExit);
      detach.push(() => child.off("exit", onExit));
      return node;
    });
    const failed = new Promise<never>((_, reject) => {
      for (const node of nodes) {
        const onMessage = (message: { type: string; reason?: string }) => {
          if (message.type === "failed") {
            reject(new Error(`scaleout: ${node.name} stopped: ${message.reason ?? "unknown"}`));
          }
        };
        node.child.on("message", onMessage);
        detach.push(() => node.child.off("message", onMessage));
      }
    });
    const roundTripsMs = await Promise.all(
      nodes.map((node) =>
        request<{ roundTripMs?: number }>(node.child, "ready", {
          type: "run",
          config: processConfig(stack, node.name, options),
        }).then((ready) => ready.roundTripMs ?? Number.NaN),
      ),
    );
    return new Cluster(
      stack,
      nodes,
      roundTripsMs,
      { pool, isOwned: options.pool === undefined },
      failed,
      detach,
    );
  }

  /**
   * Hands an update to the peer process that owns its chat (chat id mod processes), as a load
   * balancer in front of webhook processes that routes by chat would.
   */
  deliver(update: Update): void {
    const chat = update.message?.chat.id ?? 0;
    const node = this.nodes[Math.abs(chat) % this.nodes.length] as ClusterNode;
    if (node.isAlive) node.child.send({ type: "update", update });
  }

  /** Stats of every live process. */
  async stats(): Promise<NodeStats[]> {
    return this.#ask<NodeStats>();
  }

  /** Stats of every live peer process. */
  async peerStats(): Promise<PeerStats[]> {
    return this.#ask<PeerStats>();
  }

  async #ask<S>(): Promise<S[]> {
    const live = this.nodes.filter((node) => node.isAlive);
    const answers = await Promise.all(
      live.map((node) => request<{ stats?: S }>(node.child, "stats", { type: "stats" })),
    );
    return answers.map((answer) => answer.stats as S);
  }

  /** The process holding the poller lease, once one does (never, for a peer). */
  async leader(): Promise<ClusterNode | undefined> {
    if (this.stack !== "telepace") return undefined;
    const leading = (await this.stats()).find((stats) => stats.isLeader);
    return this.nodes.find((node) => node.name === leading?.name);
  }

  /** `kill -9`: no cleanup, leases left to expire. */
  async kill(node: ClusterNode): Promise<void> {
    if (!node.isAlive) return;
    const exited = new Promise((resolve) => node.child.once("exit", resolve));
    node.child.kill("SIGKILL");
    await exited;
  }

  /**
   * Ends the run in every live process (what it still holds is dropped) and hands them back to
   * the pool; a process that does not answer within 5 s is killed.
   */
  async stop(): Promise<void> {
    await Promise.all(
      this.nodes
        .filter((node) => node.isAlive)
        .map(async (node) => {
          const timer = setTimeout(() => node.child.kill("SIGKILL"), 5_000);
          await request(node.child, "ended", { type: "end" }).catch(() => {});
          clearTimeout(timer);
        }),
    );
    for (const detach of this.#detach) detach();
    this.#pool.giveBack(
      this.stack,
      this.nodes.map((node) => node.child),
    );
    if (this.#ownsPool) await this.#pool.close();
  }
}

/** Sends `message` and resolves with the first answer of type `answer`; rejects on exit. */
function request<A>(child: ChildProcess, answer: string, message: object): Promise<A> {
  return new Promise<A>((resolve, reject) => {
    const onExit = (code: number | null) => {
      child.off("message", onMessage);
      reject(new Error(`scaleout: a process exited with ${code} before it answered ${answer}`));
    };
    const onMessage = (reply: { type: string }) => {
      if (reply.type !== answer) return;
      child.off("exit", onExit);
      child.off("message", onMessage);
      resolve(reply as A);
    };
    child.on("exit", onExit);
    child.on("message", onMessage);
    child.send(message);
  });
}

/** The configuration of a run in a process of `stack`. */
function processConfig(
  stack: ClusterStack,
  name: string,
  options: ClusterOptions,
): NodeConfig | PeerConfig {
  const { redisUrl, apiRoot, token, prefix } = options;
  if (stack !== "telepace") return { name, redisUrl, apiRoot, token, prefix };
  const config: NodeConfig = {
    name,
    role: "all",
    redisUrl,
    apiRoot,
    token,
    prefix,
    leaseMs: options.leaseMs,
    pollerLeaseMs: options.pollerLeaseMs ?? BOT_POLLER_LEASE_MS,
    concurrency: options.concurrency ?? 32,
    sharedPacing: options.sharedPacing ?? true,
  };
  return config;
}

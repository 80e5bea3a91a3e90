// Several processes of one bot against one sim and one Redis: starts them (TypeScript through
// tsx, packages from source), hands the peer's processes their updates, asks them for stats,
// kills or stops them.

import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Update } from "@grammyjs/types";
import type { NodeConfig, NodeStats } from "./bot-process.js";
import type { PeerConfig, PeerStats } from "./bottleneck-process.js";

/** The bot's stack: telepace over @telepace/redis, or grammY's throttler over clustered Bottleneck. */
export type ClusterStack = "telepace" | "bottleneck";

const SCRIPTS: Readonly<Record<ClusterStack, string>> = {
  telepace: fileURLToPath(new URL("./bot-process.ts", import.meta.url)),
  bottleneck: fileURLToPath(new URL("./bottleneck-process.ts", import.meta.url)),
};

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

  private constructor(stack: ClusterStack, nodes: ClusterNode[], roundTripsMs: number[]) {
    this.stack = stack;
    this.nodes = nodes;
    this.roundTripsMs = roundTripsMs;
    this.failed = new Promise<never>((_, reject) => {
      for (const node of nodes) {
        node.child.on("message", (message: { type: string; reason?: string }) => {
          if (message.type === "failed") {
            reject(new Error(`scaleout: ${node.name} stopped: ${message.reason ?? "unknown"}`));
          }
        });
      }
    });
    // Observed only while a run races it; a later failure must not go unhandled.
    this.failed.catch(() => {});
  }

  /** Starts every process and resolves once each has said it is ready. */
  static async start(options: ClusterOptions): Promise<Cluster> {
    const stack = options.stack ?? "telepace";
    const nodes = Array.from({ length: options.processes }, (_, index) => {
      const name = `node${index + 1}`;
      const child = fork(SCRIPTS[stack], [], {
        execArgv: ["--conditions=@telepace/source", "--import", "tsx"],
        env: { ...process.env, ...processConfig(stack, name, options) },
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      const node: ClusterNode = { name, child, isAlive: true };
      child.once("exit", () => {
        node.isAlive = false;
      });
      return node;
    });
    const roundTripsMs = await Promise.all(
      nodes.map(
        (node) =>
          new Promise<number>((resolve, reject) => {
            node.child.once("exit", (code) =>
              reject(new Error(`${node.name} exited with ${code}`)),
            );
            node.child.on("message", (message: { type: string; roundTripMs?: number }) => {
              if (message.type === "ready") resolve(message.roundTripMs ?? Number.NaN);
            });
          }),
      ),
    );
    return new Cluster(stack, nodes, roundTripsMs);
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
    return Promise.all(
      this.nodes
        .filter((node) => node.isAlive)
        .map(
          (node) =>
            new Promise<S>((resolve) => {
              const listener = (message: { type: string; stats?: S }) => {
                if (message.type !== "stats" || message.stats === undefined) return;
                node.child.off("message", listener);
                resolve(message.stats);
              };
              node.child.on("message", listener);
              node.child.send({ type: "stats" });
            }),
        ),
    );
  }

  /** The process holding the poller lease, once one does (never, for the peer). */
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

  /** Stops every live process gracefully (SIGKILL after 5 s). */
  async stop(): Promise<void> {
    await Promise.all(
      this.nodes
        .filter((node) => node.isAlive)
        .map(async (node) => {
          const exited = new Promise((resolve) => node.child.once("exit", resolve));
          node.child.send({ type: "stop" });
          const timer = setTimeout(() => node.child.kill("SIGKILL"), 5_000);
          await exited;
          clearTimeout(timer);
        }),
    );
  }
}

/** The environment a process of `stack` reads its configuration from. */
function processConfig(
  stack: ClusterStack,
  name: string,
  options: ClusterOptions,
): Record<string, string> {
  const { redisUrl, apiRoot, token, prefix } = options;
  if (stack === "bottleneck") {
    const config: PeerConfig = { name, redisUrl, apiRoot, token, prefix };
    return { TELEPACE_PEER: JSON.stringify(config) };
  }
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
  return { TELEPACE_NODE: JSON.stringify(config) };
}

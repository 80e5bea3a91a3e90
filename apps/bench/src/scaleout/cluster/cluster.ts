// Several processes of one bot against one sim and one Redis: starts them (TypeScript through
// tsx, packages from source), asks them for stats, kills or stops them.

import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { NodeConfig, NodeStats } from "./bot-process.js";

const SCRIPT = fileURLToPath(new URL("./bot-process.ts", import.meta.url));

/**
 * The reference bot's poller lease (`--poller-lease-ms`), so a run with the defaults hands the
 * polling over as the bot does. The worker's lease is the library's default, which the bot uses.
 */
export const BOT_POLLER_LEASE_MS = 1_500;

export interface ClusterOptions {
  readonly processes: number;
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
  readonly nodes: ClusterNode[];
  /** Rejects when a process reports that it stopped on its own (its polling stopped for good). */
  readonly failed: Promise<never>;

  private constructor(nodes: ClusterNode[]) {
    this.nodes = nodes;
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
    const nodes = Array.from({ length: options.processes }, (_, index) => {
      const config: NodeConfig = {
        name: `node${index + 1}`,
        role: "all",
        redisUrl: options.redisUrl,
        apiRoot: options.apiRoot,
        token: options.token,
        prefix: options.prefix,
        leaseMs: options.leaseMs,
        pollerLeaseMs: options.pollerLeaseMs ?? BOT_POLLER_LEASE_MS,
        concurrency: options.concurrency ?? 32,
        sharedPacing: options.sharedPacing ?? true,
      };
      const child = fork(SCRIPT, [], {
        execArgv: ["--conditions=@telepace/source", "--import", "tsx"],
        env: { ...process.env, TELEPACE_NODE: JSON.stringify(config) },
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      const node: ClusterNode = { name: config.name, child, isAlive: true };
      child.once("exit", () => {
        node.isAlive = false;
      });
      return node;
    });
    await Promise.all(
      nodes.map(
        (node) =>
          new Promise<void>((resolve, reject) => {
            node.child.once("exit", (code) =>
              reject(new Error(`${node.name} exited with ${code}`)),
            );
            node.child.on("message", (message: { type: string }) => {
              if (message.type === "ready") resolve();
            });
          }),
      ),
    );
    return new Cluster(nodes);
  }

  /** Stats of every live process. */
  async stats(): Promise<NodeStats[]> {
    return Promise.all(
      this.nodes
        .filter((node) => node.isAlive)
        .map(
          (node) =>
            new Promise<NodeStats>((resolve) => {
              const listener = (message: { type: string; stats?: NodeStats }) => {
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

  /** The process holding the poller lease, once one does. */
  async leader(): Promise<ClusterNode | undefined> {
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

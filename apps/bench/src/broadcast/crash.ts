// kill -9 in the middle of a paid broadcast, twice over: one bot process on a FileUpdateJournal,
// killed and started again on the same directory; and three processes sharing the broadcast over
// Redis, one of them killed (its batches are taken over when their leases run out). The sim
// counts what each recipient got.

import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { BroadcastReport } from "@telepace/broadcast";
import { FileUpdateJournal } from "@telepace/journal-file";
import { startRedis } from "@telepace/testing";
import { childExecArgv } from "../telepace-loading.js";
import type { NodeConfig, NodeMessage } from "./broadcast-node.js";
import type { SimHost } from "./sim-link.js";

const SCRIPT = fileURLToPath(new URL("./broadcast-node.ts", import.meta.url));

/** What a crash run found. */
export interface CrashRun {
  readonly recipients: number;
  readonly processes: number;
  /** Recipients the sim has no message for. */
  readonly missed: number;
  /** Recipients with more than one message. */
  readonly duplicates: number;
  /** Of those, the ones no process reported as resent after a crash (must be 0). */
  readonly duplicatesBeyondInFlight: number;
  /** Sends started with no outcome when the process died (in its store then). */
  readonly inFlightAtKill: number;
  /** Recipients reported resent (the sends cut off in flight, sent again). */
  readonly resent: number;
  /** Sent when the kill came. */
  readonly sentAtKill: number;
  readonly tooManyRequests: number;
  readonly status: string;
}

interface Node {
  readonly child: ChildProcess;
  /** Resolves once the process loaded its modules and waits for {@link go}. */
  readonly loaded: Promise<void>;
  readonly report: Promise<BroadcastReport>;
  settled: number;
}

/** Resolves once every node loaded (rejects if one exited first), then tells each to start. */
async function go(nodes: readonly Node[]): Promise<void> {
  await Promise.all(nodes.map((node) => Promise.race([node.loaded, node.report])));
  for (const node of nodes) node.child.send({ type: "go" });
}

function startNode(config: NodeConfig, resent: Set<number>): Node {
  const child = fork(SCRIPT, [], {
    execArgv: childExecArgv(),
    env: { ...process.env, TELEPACE_BROADCAST_NODE: JSON.stringify(config) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let onLoaded: () => void = () => {};
  const node: Node = {
    child,
    settled: 0,
    loaded: new Promise((resolve) => {
      onLoaded = resolve;
    }),
    report: new Promise((resolve, reject) => {
      child.on("message", (message: NodeMessage) => {
        if (message.type === "loaded") onLoaded();
        if (message.type === "settled") node.settled = message.settled;
        if (message.type === "resent") resent.add(message.chatId);
        if (message.type === "report") resolve(message.report);
      });
      child.once("exit", (code, signal) => {
        if (signal !== "SIGKILL") reject(new Error(`${config.workerId} exited (${code}) early`));
      });
    }),
  };
  void node.report.catch(() => {});
  return node;
}

async function kill(node: Node): Promise<void> {
  const exited = once(node.child, "exit");
  node.child.kill("SIGKILL");
  await exited;
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * Runs one crash scenario over `recipients` paid sends against a fresh sim in `host`'s process.
 * The process that takes over after the kill (file journal) is started with the others and
 * waits, loaded, until the kill.
 */
export async function runCrash(
  host: SimHost,
  store: "file" | "redis",
  recipients: number,
  processes: number,
): Promise<CrashRun> {
  const [sim, redis] = await Promise.all([
    host.open({ recipients, chatters: 0, timeScale: 1, paidBroadcasts: true, seed: 1 }),
    store === "redis" ? startRedis() : undefined,
  ]);
  const dir = await mkdtemp(path.join(tmpdir(), "telepace-bench-crash-"));
  // Every process started, for the clean-up; `nodes` are those running the broadcast.
  const started: Node[] = [];
  const nodes: Node[] = [];
  try {
    const recipientsFile = path.join(dir, "recipients.json");
    await writeFile(recipientsFile, JSON.stringify(sim.recipients));
    const resent = new Set<number>();
    const config = (workerId: string): NodeConfig => ({
      store,
      where: redis?.url ?? path.join(dir, "journal"),
      apiRoot: sim.apiRoot,
      token: sim.token,
      recipientsFile,
      workerId,
    });
    const begin = (workerId: string): Node => {
      const node = startNode(config(workerId), resent);
      started.push(node);
      return node;
    };
    for (let n = 1; n <= processes; n++) nodes.push(begin(`node${n}`));
    const successor = store === "file" ? begin("restarted") : undefined;
    await go(nodes);
    const victim = nodes[0] as Node;
    // A third of the way (by what the victim settled, so it surely holds batches).
    const third = Math.floor(recipients / 3 / processes);
    await until(() => victim.settled >= third);
    await kill(victim);
    const sentAtKill = (await sim.report()).messagesSent;
    let inFlightAtKill = 0;
    if (successor !== undefined) {
      const journal = await FileUpdateJournal.open(path.join(dir, "journal"));
      for (const [key, value] of await journal.state()) {
        if (/^broadcast:crash:\d+$/.test(key) && value === "s") inFlightAtKill++;
      }
      await journal.close();
      nodes.push(successor);
      await go([successor]);
    }
    const reports = await Promise.all(nodes.slice(1).map((node) => node.report));
    const report = await sim.report();
    const counts = report.messagesPerRecipient;
    const twice = sim.recipients.filter((_, index) => (counts[index] as number) > 1);
    return {
      recipients,
      processes,
      missed: counts.filter((count) => count === 0).length,
      duplicates: twice.length,
      duplicatesBeyondInFlight: twice.filter((id) => !resent.has(id)).length,
      inFlightAtKill: store === "file" ? inFlightAtKill : resent.size,
      resent: resent.size,
      sentAtKill,
      tooManyRequests: report.tooManyRequests,
      status: reports.map((r) => r.status).join(", "),
    };
  } finally {
    for (const node of started) {
      if (node.child.exitCode === null && node.child.signalCode === null) await kill(node);
    }
    await sim.close();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

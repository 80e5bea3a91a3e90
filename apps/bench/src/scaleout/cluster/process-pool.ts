// Bot processes kept between runs: starting one (Node, tsx, grammY or telepace) costs about as
// much CPU as a second of a run's load, so an area starts each stack's processes once and hands
// them from run to run; each run builds its own bot inside them (process-host.ts). A process that
// was killed or stopped on its own is not handed back.

import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { childExecArgv } from "../../telepace-loading.js";

/** The bot's stack: telepace over @telepace/redis, or one of the peers (see cluster.ts). */
export type ClusterStack = "telepace" | "bottleneck" | "bullmq";

const SCRIPTS: Readonly<Record<ClusterStack, string>> = {
  telepace: fileURLToPath(new URL("./bot-process.ts", import.meta.url)),
  bottleneck: fileURLToPath(new URL("./bottleneck-process.ts", import.meta.url)),
  bullmq: fileURLToPath(new URL("./bullmq-process.ts", import.meta.url)),
};

/** What a pool has started so far. */
export interface ProcessPoolSnapshot {
  readonly started: number;
  /** Wall time `take` spent waiting for new processes to come up, ms. */
  readonly startingMs: number;
}

export class ProcessPool {
  readonly #idle: Record<ClusterStack, ChildProcess[]> = {
    telepace: [],
    bottleneck: [],
    bullmq: [],
  };
  #isClosed = false;
  #started = 0;
  #startingMs = 0;

  /** `count` processes of `stack` that take runs: idle ones first, then new ones. */
  async take(stack: ClusterStack, count: number): Promise<ChildProcess[]> {
    if (this.#isClosed) throw new Error("scaleout: the process pool is closed");
    const idle = this.#idle[stack].filter(isRunning);
    const taken = idle.splice(0, count);
    this.#idle[stack] = idle;
    const startingAt = performance.now();
    const started = await Promise.all(
      Array.from({ length: count - taken.length }, () => startProcess(stack)),
    );
    if (started.length > 0) this.#startingMs += performance.now() - startingAt;
    this.#started += started.length;
    return [...taken, ...started];
  }

  snapshot(): ProcessPoolSnapshot {
    return Object.freeze({ started: this.#started, startingMs: this.#startingMs });
  }

  /** Takes back processes whose run has ended; the dead are let go. */
  giveBack(stack: ClusterStack, children: readonly ChildProcess[]): void {
    const running = children.filter(isRunning);
    if (this.#isClosed) for (const child of running) child.send({ type: "exit" });
    else this.#idle[stack].push(...running);
  }

  /** Ends every idle process and waits for them to exit. */
  async close(): Promise<void> {
    this.#isClosed = true;
    const idle = Object.values(this.#idle).flat().filter(isRunning);
    for (const stack of Object.keys(this.#idle) as ClusterStack[]) this.#idle[stack] = [];
    await Promise.all(
      idle.map(async (child) => {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.send({ type: "exit" });
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null && child.connected;
}

/**
 * Forks a process of `stack` and resolves once it says it takes runs. It loads telepace as this
 * process does: from dist, as users run it (and sooner started than tsx compiling the sources),
 * or from source under tests.
 */
function startProcess(stack: ClusterStack): Promise<ChildProcess> {
  const child = fork(SCRIPTS[stack], [], {
    execArgv: childExecArgv(),
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => {
      child.off("message", onMessage);
      reject(new Error(`scaleout: a ${stack} process exited with ${code} before it was up`));
    };
    const onMessage = (message: { type: string }) => {
      if (message.type !== "up") return;
      child.off("exit", onExit);
      child.off("message", onMessage);
      resolve(child);
    };
    child.on("exit", onExit);
    child.on("message", onMessage);
  });
}

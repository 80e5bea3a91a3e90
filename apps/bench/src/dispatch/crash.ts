// A crash mid-backlog and a restart: a bot process (crash-child.ts) drains a backlog from the
// simulator, is killed with SIGKILL after a number of updates finished, and a new process takes
// over. Updates that never finished in either process are lost.

import { type ChildProcess, spawn } from "node:child_process";
import { access, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { childExecArgv } from "../telepace-loading.js";
import type { CrashChildConfig } from "./crash-child.js";
import { openSimLink } from "./sim-link.js";
import type { UpdateStream } from "./workload.js";

/** Sizes of a crash run. */
export interface CrashOptions {
  readonly kind: CrashChildConfig["kind"];
  readonly concurrency: number;
  /** The first process is killed once this many updates finished. */
  readonly killAfter: number;
  readonly latencyMs: number;
  /** The run gives up this long after the restart, ms. */
  readonly deadlineMs: number;
  /**
   * Once the restarted process polls and the simulator holds nothing unconfirmed, the run ends
   * after this long without a finish, ms.
   */
  readonly quietMs: number;
}

/** What a crash run measured. */
export interface CrashRun {
  readonly kind: CrashChildConfig["kind"];
  readonly concurrency: number;
  readonly updates: number;
  /** Updates finished (distinct) before the kill. */
  readonly finishedBeforeKill: number;
  /** Updates that never finished in either process. */
  readonly lost: number;
  /** Updates that finished more than once (run again after the restart). */
  readonly repeated: number;
  readonly durationMs: number;
}

const CHILD = fileURLToPath(new URL("./crash-child.ts", import.meta.url));
const BENCH_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Starts a bot process; it loads, then waits for {@link go} before it polls. */
function startChild(config: CrashChildConfig): ChildProcess {
  return spawn(process.execPath, [...childExecArgv(), CHILD, JSON.stringify(config)], {
    cwd: BENCH_ROOT,
    stdio: ["pipe", "ignore", "inherit"],
  });
}

/** Lets a started bot process open its journal and poll. */
function go(child: ChildProcess): void {
  child.stdin?.end("go\n");
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

async function completions(file: string): Promise<number[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map(Number);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

/** Runs the backlog of `stream` through a process that is killed, then through a second one. */
export async function runCrash(stream: UpdateStream, options: CrashOptions): Promise<CrashRun> {
  const link = await openSimLink(stream, options.latencyMs);
  const directory = await mkdtemp(path.join(tmpdir(), "telepace-bench-crash-"));
  const startedAt = performance.now();
  try {
    for (let index = 0; index < stream.updates.length; index++) link.send(index);
    const config: CrashChildConfig = {
      kind: options.kind,
      apiRoot: link.sim.apiRoot,
      token: link.sim.token,
      concurrency: options.concurrency,
      stream: stream.options,
      journalDirectory: path.join(directory, "journal"),
      completionsPath: path.join(directory, "completions"),
      readyPath: path.join(directory, "first-ready"),
    };
    const secondReady = path.join(directory, "second-ready");
    // The successor loads while the first runs, so the kill is not followed by seconds of Node
    // starting; what the run counts (lost, run again) does not depend on that time.
    const first = startChild(config);
    const second = startChild({ ...config, readyPath: secondReady });
    go(first);
    let finishedBeforeKill = 0;
    try {
      for (;;) {
        await sleep(5);
        const done = new Set(await completions(config.completionsPath)).size;
        if (done >= options.killAfter || first.exitCode !== null) break;
      }
    } catch (error) {
      await kill(second);
      throw error;
    } finally {
      await kill(first);
    }
    finishedBeforeKill = new Set(await completions(config.completionsPath)).size;
    go(second);
    const restartedAt = performance.now();
    try {
      // What the first process finished is no progress of this one; and starting a process can
      // take seconds on a busy machine, so quiet counts from its polling at the earliest.
      let seen = finishedBeforeKill;
      let lastProgressAt = Number.POSITIVE_INFINITY;
      while (performance.now() - restartedAt < options.deadlineMs) {
        await sleep(20);
        if (lastProgressAt === Number.POSITIVE_INFINITY && (await exists(secondReady))) {
          lastProgressAt = performance.now();
        }
        const done = new Set(await completions(config.completionsPath)).size;
        if (done >= stream.updates.length) break;
        if (done > seen) {
          seen = done;
          lastProgressAt = performance.now();
        } else if (
          link.sim.pendingUpdates() === 0 &&
          performance.now() - lastProgressAt > options.quietMs
        ) {
          break;
        }
      }
    } finally {
      await kill(second);
    }
    const all = await completions(config.completionsPath);
    const distinct = new Set(all);
    return {
      kind: options.kind,
      concurrency: options.concurrency,
      updates: stream.updates.length,
      finishedBeforeKill,
      lost: stream.updates.length - distinct.size,
      repeated: all.length - distinct.size,
      durationMs: performance.now() - startedAt,
    };
  } finally {
    await link.close();
    await rm(directory, { recursive: true, force: true });
  }
}

// Child processes for the lock tests: a journal holder started plainly or as pid 1 of a fresh pid
// namespace (`unshare --pid --fork --mount-proc`, root only), and killed with SIGKILL.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { namespacesUnavailable } from "./helpers.js";

const LOCK_CHILD = fileURLToPath(new URL("./fixtures/lock-child.ts", import.meta.url));
const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
const NODE_ARGS = ["--conditions=@telepace/source", "--import", "tsx"];

/** Why pid-namespace tests cannot run here, or `undefined` when they can. */
export const pidNamespaceUnavailable = (): string | undefined =>
  namespacesUnavailable("pid namespaces", ["--pid", "--fork", "--mount-proc", "true"]);

/** What a lock child printed. */
export interface LockChildReport {
  readonly pid: number;
  readonly pidNamespace: string | null;
  readonly status: "open" | "refused";
  readonly takenOverFrom?: number | null;
  readonly unfinished?: number[];
  readonly code?: string;
  readonly message?: string;
}

/** A running lock child. */
export interface LockChild {
  readonly report: LockChildReport;
  /** The journal process's pid in this (the test's) namespace. */
  readonly hostPid: number;
  /** SIGKILLs the journal process and waits until it is gone. */
  kill(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Kills every child still running (for `afterEach`). */
export async function killChildren(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await once(child, "exit");
      }
    }),
  );
  running.clear();
}

/** The only child of process `pid` (unshare's forked journal process). */
async function childOf(pid: number): Promise<number> {
  const children = (await readFile(`/proc/${pid}/task/${pid}/children`, "utf8")).trim();
  return Number(children.split(" ")[0]);
}

/**
 * Starts a process that opens the journal in `directory` (appending `append`, if given) and
 * holds it; resolves with its report once it has opened (or been refused).
 */
export async function startLockChild(
  directory: string,
  options: { readonly append?: number; readonly inPidNamespace?: boolean } = {},
): Promise<LockChild> {
  const args = [...NODE_ARGS, LOCK_CHILD, directory];
  if (options.append !== undefined) args.push(String(options.append));
  // --kill-child: if the test dies, the journal process in the namespace dies with unshare.
  const child = options.inPidNamespace
    ? spawn(
        "unshare",
        ["--pid", "--fork", "--mount-proc", "--kill-child", process.execPath, ...args],
        {
          cwd: PACKAGE,
          stdio: ["ignore", "pipe", "pipe"],
        },
      )
    : spawn(process.execPath, args, { cwd: PACKAGE, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      const end = stdout.indexOf("\n");
      if (end >= 0) resolve(stdout.slice(0, end));
    });
    child.once("exit", (code) => reject(new Error(`lock child exited (${code}): ${stderr}`)));
  });
  const report = JSON.parse(line) as LockChildReport;
  const hostPid = options.inPidNamespace
    ? await childOf(child.pid as number)
    : (child.pid as number);
  return {
    report,
    hostPid,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      process.kill(hostPid, "SIGKILL");
      await exited;
    },
  };
}

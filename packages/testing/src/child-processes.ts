// Child processes a test starts (a bot it kills with SIGKILL, the workers of a bot run as
// several): tracked, so that an `afterEach` kills what is still running and waits until it is gone.

import type { ChildProcess } from "node:child_process";
import { once } from "node:events";

/** The children of a test file, and a way to be rid of them. */
export interface ChildProcesses {
  /** Tracks `child` (returned as is). */
  track<T extends ChildProcess>(child: T): T;
  /** SIGKILLs every tracked child that still runs, waits for each to exit, and forgets them all. */
  killAll(): Promise<void>;
}

/** Whether a child process is still running (neither exited nor killed by a signal). */
export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/**
 * A tracker for a test file's child processes.
 *
 * @example
 * const children = childProcesses();
 * afterEach(() => children.killAll());
 * const bot = children.track(fork(script));
 */
export function childProcesses(): ChildProcesses {
  const tracked = new Set<ChildProcess>();
  return {
    track(child) {
      tracked.add(child);
      return child;
    },
    async killAll() {
      const running = [...tracked].filter(isRunning);
      tracked.clear();
      await Promise.all(
        running.map(async (child) => {
          const exited = once(child, "exit");
          child.kill("SIGKILL");
          await exited;
        }),
      );
    },
  };
}

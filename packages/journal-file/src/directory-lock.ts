// One process per journal directory: a lock file naming its holder (see `lock-holder`), created
// atomically with its content (hard link of a finished temporary file), and taken over only when
// the holder is known to be gone — by its liveness socket, or where that cannot say, by its pid.

import { randomBytes } from "node:crypto";
import { link, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ioError, JournalError } from "./errors.js";
import { listenLiveness, probeLiveness } from "./liveness-socket.js";
import {
  describeHolder,
  formatHolder,
  isKnownDifferent,
  type LockHolder,
  type ProcessIdentity,
  parseHolder,
  startTimeOf,
  thisProcess,
} from "./lock-holder.js";

/** Whether a process with this pid exists here (a zombie or another user's process counts). */
function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** What the lock file says: nobody (no file), a holder, or nothing readable (`unreadable`). */
async function readLock(path: string): Promise<LockHolder | "unreadable" | undefined> {
  try {
    return parseHolder(await readFile(path, "utf8")) ?? "unreadable";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Why a lock's holder is taken to be alive (the lock is refused), or that it is gone. */
type Verdict = { readonly isAlive: false } | { readonly isAlive: true; readonly detail: string };

const GONE: Verdict = Object.freeze({ isAlive: false });

/**
 * The tokens of the locks this process holds, shared by every copy of this package loaded in it
 * (a global symbol), so that "this process opened it" does not depend on the platform.
 */
function heldTokens(): Set<string> {
  const key = Symbol.for("@telepace/journal-file:held-locks");
  const global = globalThis as { [key]?: Set<string> };
  global[key] ??= new Set();
  return global[key];
}

/**
 * Whether the holder of a lock still runs. The liveness socket answers across pid namespaces;
 * without one (an older version, a file system without sockets) the pid answers, but only where
 * it means the same process: on this boot, in this pid namespace, with the same start time.
 */
async function judge(
  directory: string,
  holder: LockHolder,
  self: ProcessIdentity,
): Promise<Verdict> {
  const isSamePid =
    holder.pid === self.pid &&
    !isKnownDifferent(holder.pidNamespace, self.pidNamespace) &&
    !isKnownDifferent(holder.bootId, self.bootId);
  // This very process: a journal it has open, or one a worker thread of it has open.
  if (
    (holder.token !== undefined && heldTokens().has(holder.token)) ||
    (isSamePid && holder.startTime !== undefined && holder.startTime === self.startTime)
  ) {
    return { isAlive: true, detail: `this process (pid ${self.pid})` };
  }
  if (holder.socket !== undefined) {
    const liveness = await probeLiveness(directory, holder.socket);
    if (liveness === "alive") return { isAlive: true, detail: describeHolder(holder, self) };
    if (liveness === "gone") return GONE;
  }
  // The kernel has rebooted since: no process of that boot runs.
  if (isKnownDifferent(holder.bootId, self.bootId)) return GONE;
  if (isKnownDifferent(holder.pidNamespace, self.pidNamespace)) {
    return {
      isAlive: true,
      detail: `${describeHolder(holder, self)}, which this process cannot check`,
    };
  }
  // This pid, but not this process: a container that came back with the same pid (1, say)
  // after a crash.
  if (holder.pid === self.pid) return GONE;
  if (!isPidAlive(holder.pid)) return GONE;
  const startTime = holder.startTime === undefined ? undefined : await startTimeOf(holder.pid);
  // The pid was reused by a process that started later.
  if (isKnownDifferent(startTime, holder.startTime)) return GONE;
  return { isAlive: true, detail: describeHolder(holder, self) };
}

function lockedError(path: string, detail: string): JournalError {
  return new JournalError(
    "ERR_JOURNAL_LOCKED",
    `The journal is already open in ${detail} (lock file ${path}); stop it, or delete the lock file if no journal runs there`,
  );
}

/** A held lock; {@link release} removes the file if it is still this one. */
export interface DirectoryLock {
  /** The holder whose lock was taken over because it is gone, if any. */
  readonly takenOverFrom: LockHolder | undefined;
  /** Whether other processes can check this one through a liveness socket (see README). */
  readonly hasLivenessSocket: boolean;
  release(): Promise<void>;
}

/**
 * Takes the lock at `path` for this process, or throws `ERR_JOURNAL_LOCKED` naming the live
 * holder. Two processes taking over the same stale lock at the same instant can both succeed;
 * the lock guards against a second running instance, not against that race.
 */
export async function acquireLock(path: string): Promise<DirectoryLock> {
  const directory = dirname(path);
  const self = await thisProcess();
  const token = randomBytes(8).toString("hex");
  const temporary = `${path}.${self.pid}.${token}`;
  const socket = await listenLiveness(directory);
  const me: LockHolder = {
    ...self,
    ...(socket === undefined ? {} : { socket: socket.name }),
    token,
  };
  const held = (takenOverFrom: LockHolder | undefined): DirectoryLock => {
    heldTokens().add(token);
    return {
      takenOverFrom,
      hasLivenessSocket: socket !== undefined,
      async release() {
        try {
          const now = await readLock(path);
          if (typeof now === "object" && now.token === token) await rm(path, { force: true });
        } finally {
          heldTokens().delete(token);
          await socket?.close();
        }
      },
    };
  };
  try {
    await writeFile(temporary, formatHolder(me), { flag: "wx" });
    // A lock can disappear between a failed link and reading it (its owner closed): try again.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await link(temporary, path);
        return held(undefined);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const holder = await readLock(path);
      if (holder === undefined) continue;
      if (holder !== "unreadable") {
        const verdict = await judge(directory, holder, self);
        if (verdict.isAlive) throw lockedError(path, verdict.detail);
      }
      await rename(temporary, path);
      const now = await readLock(path);
      if (typeof now !== "object" || now.token !== token) {
        throw lockedError(
          path,
          typeof now === "object" ? describeHolder(now, self) : "another process",
        );
      }
      // The dead holder's socket file stays behind after a crash.
      if (typeof holder === "object" && holder.socket !== undefined) {
        await rm(join(directory, holder.socket), { force: true }).catch(() => {});
      }
      return held(holder === "unreadable" ? undefined : holder);
    }
    throw lockedError(path, "another process");
  } catch (error) {
    await socket?.close();
    throw error instanceof JournalError ? error : ioError(`take the lock ${path}`, error);
  } finally {
    await rm(temporary, { force: true });
  }
}

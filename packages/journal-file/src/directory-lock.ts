// One process per journal directory: a lock file holding the owner's pid, created atomically with
// its content (hard link of a finished temporary file), taken over when that pid is dead.

import { randomBytes } from "node:crypto";
import { link, readFile, rename, rm, writeFile } from "node:fs/promises";
import { ioError, JournalError } from "./errors.js";

/** Whether a process with this pid exists (a zombie or another user's process counts). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid in a lock file; `undefined` when it is gone, `NaN` when it holds no pid. */
async function readHolder(path: string): Promise<number | undefined> {
  try {
    const text = (await readFile(path, "utf8")).trim();
    return /^[1-9]\d*$/.test(text) ? Number(text) : Number.NaN;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function lockedError(path: string, pid: number | undefined): JournalError {
  const who =
    pid === undefined
      ? "another process"
      : pid === process.pid
        ? `this process (pid ${pid})`
        : `process ${pid}`;
  return new JournalError(
    "ERR_JOURNAL_LOCKED",
    `The journal is already open in ${who} (lock file ${path}); stop it, or delete the lock file if no journal runs there`,
  );
}

/** A held lock; {@link release} removes the file if it still names this process. */
export interface DirectoryLock {
  /** The pid of a dead holder this lock was taken over from, if any. */
  readonly takenOverFrom: number | undefined;
  release(): Promise<void>;
}

/**
 * Takes the lock at `path` for this process, or throws `ERR_JOURNAL_LOCKED` naming the live pid
 * that holds it. Two processes taking over the same stale lock at the same instant can both
 * succeed; the lock guards against a second running instance, not against that race.
 */
export async function acquireLock(path: string): Promise<DirectoryLock> {
  const pid = process.pid;
  const temporary = `${path}.${pid}.${randomBytes(4).toString("hex")}`;
  const held = (takenOverFrom: number | undefined): DirectoryLock => ({
    takenOverFrom,
    async release() {
      if ((await readHolder(path)) === pid) await rm(path, { force: true });
    },
  });
  try {
    await writeFile(temporary, `${pid}\n`, { flag: "wx" });
    // A lock can disappear between a failed link and reading it (its owner closed): try again.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await link(temporary, path);
        return held(undefined);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const holder = await readHolder(path);
      if (holder === undefined) continue;
      if (!Number.isNaN(holder) && isAlive(holder)) throw lockedError(path, holder);
      await rename(temporary, path);
      const now = await readHolder(path);
      if (now !== pid) throw lockedError(path, Number.isNaN(now) ? undefined : now);
      return held(Number.isNaN(holder) ? undefined : holder);
    }
    throw lockedError(path, undefined);
  } catch (error) {
    throw error instanceof JournalError ? error : ioError(`take the lock ${path}`, error);
  } finally {
    await rm(temporary, { force: true });
  }
}

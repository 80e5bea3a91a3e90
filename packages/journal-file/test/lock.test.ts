// One process per directory: a second open is ERR_JOURNAL_LOCKED naming the holder, a lock whose
// holder is gone is taken over — told by its liveness socket, or by a pid that means this process,
// a dead one or a reused one — and close or a failed open releases the lock.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FileUpdateJournal, JournalError } from "../src/index.js";
import { probeLiveness } from "../src/liveness-socket.js";
import { thisProcess } from "../src/lock-holder.js";
import { logPath, temporaryDirectory } from "./helpers.js";
import { killChildren, startLockChild } from "./processes.js";

const lockPath = (directory: string) => join(directory, "journal.lock");
const lockOf = async (directory: string) =>
  JSON.parse(await readFile(lockPath(directory), "utf8")) as Record<string, unknown>;
const sockets = async (directory: string) =>
  (await readdir(directory)).filter((name) => name.endsWith(".sock"));

async function openError(directory: string): Promise<JournalError> {
  const error: unknown = await FileUpdateJournal.open(directory).then(
    async (journal) => {
      await journal.close();
      return undefined;
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(JournalError);
  return error as JournalError;
}

/** The pid of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await once(child, "exit");
  return child.pid as number;
}

/** Runs `body` with a live process that does nothing, and its pid. */
async function withLiveProcess(body: (pid: number) => Promise<void>): Promise<void> {
  const holder = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
    stdio: "ignore",
  });
  try {
    await body(holder.pid as number);
  } finally {
    holder.kill("SIGKILL");
    await once(holder, "exit");
  }
}

function spyWarnings(): { warnings: Record<string, unknown>[]; logger: never } {
  const warnings: Record<string, unknown>[] = [];
  const logger = {
    debug() {},
    info() {},
    error() {},
    warn: (fields: never) => warnings.push(fields),
  };
  return { warnings, logger: logger as never };
}

/** Opens a directory whose lock file holds `text`, expecting the lock taken over. */
async function expectTakenOver(text: string): Promise<void> {
  const directory = await temporaryDirectory();
  await writeFile(lockPath(directory), text);
  const journal = await FileUpdateJournal.open(directory);
  expect(await lockOf(directory)).toMatchObject({ pid: process.pid });
  await journal.close();
}

afterEach(killChildren);

describe("the directory lock", () => {
  it("names this process and a liveness socket, and refuses a second open in it until the first closes", async () => {
    const directory = await temporaryDirectory();
    const first = await FileUpdateJournal.open(directory);
    const self = await thisProcess();
    const lock = await lockOf(directory);
    expect(lock).toMatchObject({ pid: process.pid, pidNamespace: self.pidNamespace });
    expect(await probeLiveness(directory, lock.socket as string)).toBe("alive");
    const error = await openError(directory);
    expect(error.code).toBe("ERR_JOURNAL_LOCKED");
    expect(error.message).toContain(`this process (pid ${process.pid})`);
    await first.close();
    await expect(stat(lockPath(directory))).rejects.toMatchObject({ code: "ENOENT" });
    expect(await sockets(directory)).toEqual([]);
    const second = await FileUpdateJournal.open(directory);
    await second.close();
  });

  it("refuses a directory that a live process holds, told by its socket", async () => {
    const directory = await temporaryDirectory();
    const holder = await startLockChild(directory);
    expect(holder.report.status).toBe("open");
    const error = await openError(directory);
    expect(error.code).toBe("ERR_JOURNAL_LOCKED");
    expect(error.message).toContain(`process ${holder.hostPid}`);
    await holder.kill();
    // Killed: its socket is still there, but nobody listens.
    const journal = await FileUpdateJournal.open(directory);
    await journal.close();
    expect(await sockets(directory)).toEqual([]);
  });

  it("takes over from a process killed with SIGKILL even when its pid now names a live process", async () => {
    const directory = await temporaryDirectory();
    const holder = await startLockChild(directory, { append: 7 });
    const dead = await lockOf(directory);
    await holder.kill();
    await withLiveProcess(async (pid) => {
      // The same lock, as if the pid had been given to another process since.
      await writeFile(lockPath(directory), `${JSON.stringify({ ...dead, pid })}\n`);
      const { warnings, logger } = spyWarnings();
      const journal = await FileUpdateJournal.open(directory, { logger });
      expect(warnings).toEqual([{ directory, pid, pidNamespace: dead.pidNamespace }]);
      expect((await journal.unfinished()).map((update) => update.update_id)).toEqual([7]);
      await journal.close();
    });
  });

  it("refuses a lock (of an earlier version: a bare pid) that names another live process", async () => {
    const directory = await temporaryDirectory();
    await withLiveProcess(async (pid) => {
      await writeFile(lockPath(directory), `${pid}\n`);
      const error = await openError(directory);
      expect(error.code).toBe("ERR_JOURNAL_LOCKED");
      expect(error.message).toContain(`process ${pid}`);
    });
  });

  it("takes over a bare-pid lock of a process that is gone, and says so at warn", async () => {
    const directory = await temporaryDirectory();
    const pid = await deadPid();
    await writeFile(lockPath(directory), `${pid}\n`);
    const { warnings, logger } = spyWarnings();
    const journal = await FileUpdateJournal.open(directory, { logger });
    expect(await lockOf(directory)).toMatchObject({ pid: process.pid });
    expect(warnings).toEqual([{ directory, pid, pidNamespace: null }]);
    await journal.close();
  });

  it("takes over a lock naming this pid that this process did not take (a restarted container)", async () => {
    const self = await thisProcess();
    for (const text of [
      `${process.pid}\n`,
      // What this pid's previous holder wrote: same pid and namespace, an earlier start, no socket.
      `${JSON.stringify({ ...self, startTime: (self.startTime ?? 1) - 1, token: "0123" })}\n`,
    ]) {
      await expectTakenOver(text);
    }
  });

  it.runIf(process.platform === "linux")(
    "takes over a lock whose pid is alive but was given to a process started later",
    async () => {
      const directory = await temporaryDirectory();
      const self = await thisProcess();
      await withLiveProcess(async (pid) => {
        const stat = await readFile(`/proc/${pid}/stat`, "utf8");
        const startTime = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
        const lock = { ...self, pid, startTime, token: "0123" };
        await writeFile(lockPath(directory), `${JSON.stringify(lock)}\n`);
        expect((await openError(directory)).message).toContain(`process ${pid}`);
        // Started before that process: the one with that pid now is another.
        await writeFile(lockPath(directory), `${JSON.stringify({ ...lock, startTime: 1 })}\n`);
        const journal = await FileUpdateJournal.open(directory);
        await journal.close();
      });
    },
  );

  it("refuses a lock without a socket from another pid namespace, naming it", async () => {
    const directory = await temporaryDirectory();
    const self = await thisProcess();
    const other = { ...self, pid: 1, pidNamespace: "pid:[1]", host: "worker-b", token: "0123" };
    await writeFile(lockPath(directory), `${JSON.stringify(other)}\n`);
    const error = await openError(directory);
    expect(error.code).toBe("ERR_JOURNAL_LOCKED");
    expect(error.message).toContain(
      "process 1 on worker-b in another pid namespace (pid:[1]), which this process cannot check",
    );
  });

  it("takes over a lock without a socket from an earlier boot", async () => {
    const directory = await temporaryDirectory();
    const self = await thisProcess();
    await withLiveProcess(async (pid) => {
      const lock = { ...self, pid, pidNamespace: "pid:[1]", token: "1" };
      await writeFile(lockPath(directory), `${JSON.stringify(lock)}\n`);
      expect((await openError(directory)).code).toBe("ERR_JOURNAL_LOCKED");
      const before = { ...lock, bootId: "another-boot" };
      await writeFile(lockPath(directory), `${JSON.stringify(before)}\n`);
      const journal = await FileUpdateJournal.open(directory);
      await journal.close();
    });
  });

  it("takes over a lock file that holds no pid", async () => {
    await expectTakenOver("");
    await expectTakenOver('{"pid":');
  });

  it.runIf(process.platform === "linux")(
    "keeps a liveness socket in a directory whose path is too long for a socket address",
    async () => {
      const directory = join(await temporaryDirectory(), "d".repeat(60), "e".repeat(60));
      await mkdir(directory, { recursive: true });
      const journal = await FileUpdateJournal.open(directory);
      const { socket } = await lockOf(directory);
      expect(await sockets(directory)).toEqual([socket]);
      expect(await probeLiveness(directory, socket as string)).toBe("alive");
      expect((await openError(directory)).code).toBe("ERR_JOURNAL_LOCKED");
      await journal.close();
      expect(await sockets(directory)).toEqual([]);
    },
  );

  it("is released when opening fails", async () => {
    const directory = await temporaryDirectory();
    await writeFile(logPath(directory), "not a journal");
    const error = await openError(directory);
    expect(error.code).toBe("ERR_JOURNAL_CORRUPT");
    await expect(stat(lockPath(directory))).rejects.toMatchObject({ code: "ENOENT" });
    expect(await sockets(directory)).toEqual([]);
  });

  it("leaves a lock it no longer owns alone on close", async () => {
    const directory = await temporaryDirectory();
    const journal = await FileUpdateJournal.open(directory);
    await writeFile(lockPath(directory), "12345\n");
    await journal.close();
    expect(await readFile(lockPath(directory), "utf8")).toBe("12345\n");
  });
});

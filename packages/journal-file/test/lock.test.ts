// One process per directory: a second open is ERR_JOURNAL_LOCKED naming the holder's pid, a lock
// left by a dead process is taken over, and close or a failed open releases the lock.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FileUpdateJournal, JournalError } from "../src/index.js";
import { logPath, temporaryDirectory } from "./helpers.js";

const lockPath = (directory: string) => join(directory, "journal.lock");

async function lockedError(directory: string): Promise<JournalError> {
  const error: unknown = await FileUpdateJournal.open(directory).then(
    () => undefined,
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

describe("the directory lock", () => {
  it("refuses a second open in this process, naming its pid, until the first closes", async () => {
    const directory = await temporaryDirectory();
    const first = await FileUpdateJournal.open(directory);
    const error = await lockedError(directory);
    expect(error.code).toBe("ERR_JOURNAL_LOCKED");
    expect(error.message).toContain(`pid ${process.pid}`);
    expect((await readFile(lockPath(directory), "utf8")).trim()).toBe(String(process.pid));
    await first.close();
    await expect(stat(lockPath(directory))).rejects.toMatchObject({ code: "ENOENT" });
    const second = await FileUpdateJournal.open(directory);
    await second.close();
  });

  it("refuses a directory another live process holds", async () => {
    const directory = await temporaryDirectory();
    const holder: ChildProcess = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
      stdio: "ignore",
    });
    try {
      await writeFile(lockPath(directory), `${holder.pid}\n`);
      const error = await lockedError(directory);
      expect(error.code).toBe("ERR_JOURNAL_LOCKED");
      expect(error.message).toContain(`process ${holder.pid}`);
    } finally {
      holder.kill("SIGKILL");
      await once(holder, "exit");
    }
  });

  it("takes over the lock of a process that is gone, and says so at warn", async () => {
    const directory = await temporaryDirectory();
    const pid = await deadPid();
    await writeFile(lockPath(directory), `${pid}\n`);
    const warnings: Record<string, unknown>[] = [];
    const journal = await FileUpdateJournal.open(directory, {
      logger: { debug() {}, info() {}, error() {}, warn: (fields) => warnings.push(fields) },
    });
    expect((await readFile(lockPath(directory), "utf8")).trim()).toBe(String(process.pid));
    expect(warnings).toEqual([{ directory, pid }]);
    await journal.close();
  });

  it("takes over a lock file that holds no pid", async () => {
    const directory = await temporaryDirectory();
    await writeFile(lockPath(directory), "");
    const journal = await FileUpdateJournal.open(directory);
    expect((await readFile(lockPath(directory), "utf8")).trim()).toBe(String(process.pid));
    await journal.close();
  });

  it("is released when opening fails", async () => {
    const directory = await temporaryDirectory();
    await writeFile(logPath(directory), "not a journal");
    const error = await lockedError(directory);
    expect(error.code).toBe("ERR_JOURNAL_CORRUPT");
    await expect(stat(lockPath(directory))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("leaves a lock it no longer owns alone on close", async () => {
    const directory = await temporaryDirectory();
    const journal = await FileUpdateJournal.open(directory);
    await writeFile(lockPath(directory), "12345\n");
    await journal.close();
    expect(await readFile(lockPath(directory), "utf8")).toBe("12345\n");
  });
});

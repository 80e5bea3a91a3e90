// Containers as they run: a journal process is pid 1 of its own pid namespace. Killed with
// SIGKILL and started again, the new one is pid 1 too and must take the lock over; while it runs,
// a process in another namespace sharing the directory must be refused. Needs root (unshare).

import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { FileUpdateJournal, JournalError } from "../src/index.js";
import { temporaryDirectory } from "./helpers.js";
import { killChildren, pidNamespaceUnavailable, startLockChild } from "./processes.js";

const unavailable = pidNamespaceUnavailable();
if (unavailable !== undefined) {
  console.warn(`Skipping the pid-namespace lock tests: ${unavailable}.`);
}

afterEach(killChildren);

describe.skipIf(unavailable !== undefined)("the directory lock across pid namespaces", () => {
  it("lets a container that comes back as pid 1 after SIGKILL take its lock over", async () => {
    const directory = await temporaryDirectory();
    const first = await startLockChild(directory, { inPidNamespace: true, append: 41 });
    expect(first.report).toMatchObject({ pid: 1, status: "open" });
    await first.kill();
    const second = await startLockChild(directory, { inPidNamespace: true, append: 42 });
    expect(second.report).toMatchObject({
      pid: 1,
      status: "open",
      takenOverFrom: 1,
      unfinished: [41],
    });
    // The second namespace may carry the first one's number: the kernel reuses a freed
    // namespace's inode. Either way the lock was taken over, as a restarted container's would be.
    await second.kill();
    // Here pid 1 is this machine's init, alive: the pid alone would keep the lock forever.
    const journal = await FileUpdateJournal.open(directory);
    expect((await journal.unfinished()).map((update) => update.update_id)).toEqual([41, 42]);
    await journal.close();
  });

  it("refuses a second container while the first runs, naming its pid and namespace", async () => {
    const directory = await temporaryDirectory();
    const holder = await startLockChild(directory, { inPidNamespace: true });
    const other = await startLockChild(directory, { inPidNamespace: true });
    expect(other.report).toMatchObject({ pid: 1, status: "refused", code: "ERR_JOURNAL_LOCKED" });
    expect(other.report.message).toContain(
      `process 1 on ${hostname()} in another pid namespace (${holder.report.pidNamespace})`,
    );
    // From this namespace too, where pid 1 is another process.
    const error = await FileUpdateJournal.open(directory).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(JournalError);
    expect(error).toMatchObject({ code: "ERR_JOURNAL_LOCKED" });
    expect((error as Error).message).toContain(
      `in another pid namespace (${holder.report.pidNamespace})`,
    );
    await holder.kill();
  });
});

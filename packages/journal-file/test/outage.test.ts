// A failed write or sync is an outage, not the end: the journal goes back to what a completed sync
// covered, rejects changes while it cannot write (after a back-off on its clock, one of them tries
// again), and resumes by itself with nothing acknowledged lost and nothing unacknowledged claimed.
// The file system's failures are injected here; test/full-disk.test.ts fills a real one.

import diagnosticsChannel from "node:diagnostics_channel";
import { type FileHandle, open, readdir } from "node:fs/promises";
import { ManualClock } from "@telepace/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FileUpdateJournal, type JournalFileEvent, journalFileChannels } from "../src/index.js";
import { idsOf, journalRejection, logPath, temporaryDirectory, updates } from "./helpers.js";

const events: JournalFileEvent[] = [];
const listener = (message: unknown) => {
  events.push(message as JournalFileEvent);
};

afterEach(() => {
  vi.restoreAllMocks();
  diagnosticsChannel.unsubscribe(journalFileChannels.failed, listener);
  diagnosticsChannel.unsubscribe(journalFileChannels.resumed, listener);
  events.length = 0;
});

async function fileHandlePrototype(directory: string): Promise<FileHandle> {
  const handle = await open(logPath(directory), "r");
  await handle.close();
  return Object.getPrototypeOf(handle) as FileHandle;
}

function systemError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected`), { code });
}

interface Outage {
  readonly directory: string;
  readonly clock: ManualClock;
  readonly journal: FileUpdateJournal;
  readonly errors: Record<string, unknown>[];
  /** Makes every write fail with `code` until {@link heal}. */
  breakWrites(code: string): void;
  heal(): void;
}

async function journalWithOutages(): Promise<Outage> {
  const directory = await temporaryDirectory();
  const clock = new ManualClock();
  const errors: Record<string, unknown>[] = [];
  const journal = await FileUpdateJournal.open(directory, {
    clock,
    logger: { debug() {}, info() {}, warn() {}, error: (fields) => errors.push(fields) },
  });
  const prototype = await fileHandlePrototype(directory);
  let broken: ReturnType<typeof vi.spyOn> | undefined;
  return {
    directory,
    clock,
    journal,
    errors,
    breakWrites(code) {
      broken = vi.spyOn(prototype, "write").mockRejectedValue(systemError(code));
    },
    heal() {
      broken?.mockRestore();
    },
  };
}

async function reopened(directory: string): Promise<FileUpdateJournal> {
  return FileUpdateJournal.open(directory);
}

describe("a failed write or sync", () => {
  it("rejects what was being written with ERR_JOURNAL_IO; the next change resumes the journal", async () => {
    const { directory, journal, errors } = await journalWithOutages();
    await journal.append(updates(1));
    const failure = systemError("EIO");
    vi.spyOn(await fileHandlePrototype(directory), "datasync").mockRejectedValueOnce(failure);
    const error = await journalRejection(journal.append(updates(2)));
    expect(error).toMatchObject({ code: "ERR_JOURNAL_IO", cause: failure });
    expect(errors).toEqual([{ directory, code: "ERR_JOURNAL_IO", cause: "EIO" }]);
    expect(journal.snapshot()).toMatchObject({ isFailed: true, failures: 1, recoveries: 0 });
    // Not acknowledged, so not claimed: neither listed nor a duplicate.
    expect(idsOf(await journal.unfinished())).toEqual([1]);
    expect(await journal.highestUpdateId()).toBe(1);
    const again = await journal.append(updates(2, 3));
    expect(idsOf(again.appended)).toEqual([2, 3]);
    expect(journal.snapshot()).toMatchObject({ isFailed: false, failures: 1, recoveries: 1 });
    await journal.close();
    const after = await reopened(directory);
    expect(idsOf(await after.unfinished())).toEqual([1, 2, 3]);
    await after.close();
  });

  it("rejects changes with ERR_JOURNAL_FAILED while writes fail, trying again after a doubling back-off", async () => {
    const outage = await journalWithOutages();
    const { journal, clock } = outage;
    for (const name of ["failed", "resumed"] as const) {
      diagnosticsChannel.subscribe(journalFileChannels[name], listener);
    }
    await journal.append(updates(1));
    outage.breakWrites("ENOSPC");
    expect((await journalRejection(journal.append(updates(2)))).code).toBe("ERR_JOURNAL_IO");
    // The first try comes at once, then after 250 ms, 500 ms, 1 s...
    const tries: number[] = [];
    for (let step = 0; step < 8; step++) {
      const before = journal.snapshot().failures;
      const error = await journalRejection(journal.append(updates(2)));
      expect(error.code).toBe("ERR_JOURNAL_FAILED");
      expect(error.cause).toMatchObject({ code: "ERR_JOURNAL_IO", cause: { code: "ENOSPC" } });
      if (journal.snapshot().failures > before) tries.push(clock.now());
      await clock.advance(125);
    }
    expect(tries).toEqual([0, 250, 750]);
    // Finishes and state changes are refused alike; reads go on.
    expect((await journalRejection(journal.putState("k", 1))).code).toBe("ERR_JOURNAL_FAILED");
    expect((await journalRejection(journal.compact())).code).toBe("ERR_JOURNAL_FAILED");
    expect((await journalRejection(journal.restartIds())).code).toBe("ERR_JOURNAL_FAILED");
    expect(idsOf(await journal.unfinished())).toEqual([1]);
    expect(journal.snapshot()).toMatchObject({ isFailed: true, failures: 4, recoveries: 0 });
    outage.heal();
    await clock.advance(1000);
    expect(idsOf((await journal.append(updates(2))).appended)).toEqual([2]);
    expect(journal.snapshot()).toMatchObject({ isFailed: false, failures: 4, recoveries: 1 });
    expect(events.map((event) => event.type)).toEqual([
      "failed",
      "failed",
      "failed",
      "failed",
      "resumed",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "resumed", outageMs: 2000, failures: 4 });
    expect(events[0]).toMatchObject({ code: "ERR_JOURNAL_IO", systemCode: "ENOSPC" });
    // A second outage starts over with an immediate try.
    outage.breakWrites("EIO");
    await journalRejection(journal.append(updates(3)));
    outage.heal();
    await journal.append(updates(3));
    expect(journal.snapshot()).toMatchObject({ failures: 5, recoveries: 2 });
    await journal.close();
  });

  it("keeps acknowledged finishes not yet synced, and finishes asked for during the outage", async () => {
    const outage = await journalWithOutages();
    const { journal, directory } = outage;
    await journal.append(updates(1, 2, 3, 4));
    await journal.finish(1); // written, not synced
    outage.breakWrites("ENOSPC");
    await journalRejection(journal.append(updates(5)));
    expect((await journalRejection(journal.finish(2))).code).toBe("ERR_JOURNAL_FAILED");
    // Refused, but remembered: it is not listed, and goes out with the log the journal resumes with.
    expect(idsOf(await journal.unfinished())).toEqual([3, 4]);
    outage.heal();
    await outage.clock.advance(250);
    await journal.finish(3);
    await journal.close();
    const after = await reopened(directory);
    expect(idsOf(await after.unfinished())).toEqual([4]);
    expect(await after.highestUpdateId()).toBe(4);
    await after.close();
  });

  it("drops what was never acknowledged: a batch, a state change, a restart of the ids", async () => {
    const outage = await journalWithOutages();
    const { journal, directory } = outage;
    await journal.append(updates(10, 11));
    await journal.putState("kept", 1);
    await journal.finish(10);
    await journal.finish(11);
    outage.breakWrites("EIO");
    const attempts = [
      journal.append(updates(12)),
      journal.putState("lost", 2),
      journal.deleteState("kept"),
    ];
    for (const attempt of attempts) await journalRejection(attempt);
    expect((await journalRejection(journal.restartIds())).code).toBe("ERR_JOURNAL_FAILED");
    expect(await journal.highestUpdateId()).toBe(11);
    expect(await journal.state()).toEqual(new Map([["kept", 1]]));
    outage.heal();
    await journal.close();
    const after = await reopened(directory);
    expect(await after.highestUpdateId()).toBe(11);
    expect(await after.state()).toEqual(new Map([["kept", 1]]));
    expect((await after.append(updates(11, 12))).duplicates).toBe(1);
    await after.close();
  });

  it("writes what the outage held back when closed, whatever the back-off says", async () => {
    const outage = await journalWithOutages();
    const { journal, directory } = outage;
    await journal.append(updates(1, 2));
    outage.breakWrites("ENOSPC");
    await journalRejection(journal.append(updates(3)));
    await journalRejection(journal.finish(1));
    await journalRejection(journal.finish(2));
    outage.heal();
    await journal.close();
    expect(journal.snapshot()).toMatchObject({ isFailed: false, recoveries: 1 });
    const after = await reopened(directory);
    expect(await after.unfinished()).toEqual([]);
    await after.close();
  });

  it("closes, and then says ERR_JOURNAL_CLOSED, when the outage outlasts it", async () => {
    const outage = await journalWithOutages();
    const { journal, directory } = outage;
    await journal.append(updates(1));
    outage.breakWrites("EIO");
    await journalRejection(journal.append(updates(2)));
    await journal.close();
    expect((await journalRejection(journal.append(updates(2)))).code).toBe("ERR_JOURNAL_CLOSED");
    outage.heal();
    const after = await reopened(directory);
    expect(idsOf(await after.unfinished())).toEqual([1]);
    await after.close();
  });

  it("leaves no half-written new log behind when an attempt fails", async () => {
    const outage = await journalWithOutages();
    const { journal, directory, clock } = outage;
    await journal.append(updates(1));
    const prototype = await fileHandlePrototype(directory);
    vi.spyOn(prototype, "datasync").mockRejectedValue(systemError("EIO"));
    await journalRejection(journal.append(updates(2)));
    await journalRejection(journal.append(updates(2)));
    expect(await readdir(directory)).not.toContain("journal.log.compacting");
    vi.restoreAllMocks();
    await clock.advance(250);
    await journal.append(updates(2));
    await journal.close();
  });
});

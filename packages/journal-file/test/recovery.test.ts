// Reading a damaged log back: a torn tail is cut at every possible byte, a flipped bit in the last
// record is cut like a torn write, and damage anywhere else is ERR_JOURNAL_CORRUPT with the file
// left untouched.

import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { FileUpdateJournal, JournalError } from "../src/index.js";
import { idsOf, logPath, temporaryDirectory, updates } from "./helpers.js";

/**
 * A journal holding [1, 2] and state `k`, then a last group appending [3, 4]: the log as a crash
 * right after that append would leave it, and as `close()` leaves it.
 */
async function journalWithLastRecord(): Promise<{
  directory: string;
  crashed: Buffer;
  closed: Buffer;
  lastStart: number;
}> {
  const directory = await temporaryDirectory();
  const journal = await FileUpdateJournal.open(directory);
  await journal.append(updates(1, 2));
  await journal.putState("k", { step: 1 });
  const lastStart = journal.snapshot().fileBytes;
  await journal.append(updates(3, 4));
  const crashed = await readFile(logPath(directory));
  await journal.close();
  return { directory, crashed, closed: await readFile(logPath(directory)), lastStart };
}

/** Every record before the last group counts as the middle: the base record after the header too. */
const MIDDLE_START = 8;

async function openError(directory: string): Promise<unknown> {
  return FileUpdateJournal.open(directory).then(
    async (journal) => {
      await journal.close();
      return undefined;
    },
    (error: unknown) => error,
  );
}

describe("a torn tail", () => {
  it("is cut at every byte offset of the last group, keeping every record before it", async () => {
    const { directory, crashed, lastStart } = await journalWithLastRecord();
    for (let length = lastStart; length < crashed.length; length++) {
      await writeFile(logPath(directory), crashed.subarray(0, length));
      const journal = await FileUpdateJournal.open(directory);
      expect(idsOf(await journal.unfinished())).toEqual([1, 2]);
      expect(await journal.highestUpdateId()).toBe(2);
      expect(await journal.state()).toEqual(new Map([["k", { step: 1 }]]));
      // The group is a `synced` record and the append; a cut inside the append keeps the first.
      const { fileBytes, recoveredTailBytes } = journal.snapshot();
      expect(fileBytes).toBeGreaterThanOrEqual(lastStart);
      expect(fileBytes + recoveredTailBytes).toBe(length);
      expect((await stat(logPath(directory))).size).toBe(fileBytes);
      await journal.close();
    }
  });

  it("leaves a log that takes appends again, and they survive the next reopen", async () => {
    const { directory, crashed, lastStart } = await journalWithLastRecord();
    await writeFile(logPath(directory), crashed.subarray(0, lastStart + 5));
    let journal = await FileUpdateJournal.open(directory);
    // The cut batch was never acknowledged, so its ids are new again.
    expect(idsOf((await journal.append(updates(3, 5))).appended)).toEqual([3, 5]);
    await journal.close();
    journal = await FileUpdateJournal.open(directory);
    expect(journal.snapshot().recoveredTailBytes).toBe(0);
    expect(idsOf(await journal.unfinished())).toEqual([1, 2, 3, 5]);
    await journal.close();
  });

  it("is cut when the file ends in zeros (a size extended before its data reached the disk)", async () => {
    const { directory, crashed } = await journalWithLastRecord();
    await writeFile(logPath(directory), Buffer.concat([crashed, Buffer.alloc(4096)]));
    const journal = await FileUpdateJournal.open(directory);
    expect(idsOf(await journal.unfinished())).toEqual([1, 2, 3, 4]);
    expect(journal.snapshot()).toMatchObject({
      recoveredTailBytes: 4096,
      fileBytes: crashed.length,
    });
    await journal.close();
  });

  it("is logged at warn with the bytes cut", async () => {
    const { directory, crashed } = await journalWithLastRecord();
    await writeFile(logPath(directory), crashed.subarray(0, crashed.length - 3));
    const lines: { fields: Record<string, unknown>; message: string }[] = [];
    const warn = (fields: Record<string, unknown>, message: string) => {
      lines.push({ fields, message });
    };
    const journal = await FileUpdateJournal.open(directory, {
      logger: { debug() {}, info() {}, warn, error() {} },
    });
    await journal.close();
    expect(lines).toHaveLength(1);
    expect(lines[0]?.fields).toMatchObject({ directory, cutBytes: expect.any(Number) });
  });
});

describe("a flipped bit", () => {
  it("in the last group after a crash is cut like a torn write (the two look the same)", async () => {
    const { directory, crashed, lastStart } = await journalWithLastRecord();
    for (let offset = lastStart; offset < crashed.length; offset++) {
      const damaged = Buffer.from(crashed);
      damaged[offset] = (damaged[offset] as number) ^ (1 << (offset % 8));
      await writeFile(logPath(directory), damaged);
      const journal = await FileUpdateJournal.open(directory);
      expect(idsOf(await journal.unfinished())).toEqual([1, 2]);
      expect(journal.snapshot().fileBytes).toBeGreaterThanOrEqual(lastStart);
      await journal.close();
    }
  });

  it("in the last group of a closed log is ERR_JOURNAL_CORRUPT (close ends it with a synced record)", async () => {
    const { directory, closed, lastStart } = await journalWithLastRecord();
    for (const offset of [lastStart + 30, lastStart + 100, closed.length - 40]) {
      const damaged = Buffer.from(closed);
      damaged[offset] = (damaged[offset] as number) ^ 1;
      await writeFile(logPath(directory), damaged);
      expect(await openError(directory)).toMatchObject({ code: "ERR_JOURNAL_CORRUPT" });
    }
  });

  it("in a middle record is ERR_JOURNAL_CORRUPT, at every byte, and the file is not changed", async () => {
    const { directory, crashed: bytes, lastStart } = await journalWithLastRecord();
    for (let offset = MIDDLE_START; offset < lastStart; offset++) {
      const damaged = Buffer.from(bytes);
      damaged[offset] = (damaged[offset] as number) ^ (1 << (offset % 8));
      await writeFile(logPath(directory), damaged);
      const error = await openError(directory);
      expect(error, `flip at ${offset}`).toBeInstanceOf(JournalError);
      expect((error as JournalError).code).toBe("ERR_JOURNAL_CORRUPT");
      expect(await readFile(logPath(directory))).toEqual(damaged);
    }
    // Every failed open released the lock.
    await writeFile(logPath(directory), bytes);
    const journal = await FileUpdateJournal.open(directory);
    expect(idsOf(await journal.unfinished())).toEqual([1, 2, 3, 4]);
    await journal.close();
  });

  it("in the file header is ERR_JOURNAL_CORRUPT", async () => {
    const { directory, closed } = await journalWithLastRecord();
    const damaged = Buffer.from(closed);
    damaged[2] = (damaged[2] as number) ^ 4;
    await writeFile(logPath(directory), damaged);
    const error = await openError(directory);
    expect((error as JournalError).code).toBe("ERR_JOURNAL_CORRUPT");
    expect((error as Error).message).toContain("header");
  });
});

describe("a record this version cannot read", () => {
  it("is ERR_JOURNAL_CORRUPT even with a valid checksum, even at the end", async () => {
    const { directory, closed: bytes } = await journalWithLastRecord();
    const payload = Buffer.from([9, ...Buffer.from("{}")]);
    const frame = Buffer.alloc(8 + payload.length);
    frame.writeUInt32LE(payload.length, 0);
    payload.copy(frame, 8);
    frame.writeUInt32LE(crc32(payload, crc32(frame.subarray(0, 4))), 4);
    await writeFile(logPath(directory), Buffer.concat([bytes, frame]));
    const error = await openError(directory);
    expect((error as JournalError).code).toBe("ERR_JOURNAL_CORRUPT");
    expect((error as Error).message).toContain(`byte ${bytes.length}`);
  });
});

describe("unsynced records that reached the disk out of order", () => {
  it("are cut at the first damage, though intact records follow, when no sync covered it", async () => {
    // A power cut can persist a later page of the unsynced tail and lose an earlier one.
    const directory = await temporaryDirectory();
    const journal = await FileUpdateJournal.open(directory);
    await journal.append(updates(1, 2));
    const unsynced = journal.snapshot().fileBytes;
    await journal.finish(1);
    await journal.finish(2);
    const crashed = await readFile(logPath(directory));
    await journal.close();
    const damaged = Buffer.from(crashed);
    damaged.fill(0, unsynced, unsynced + 12);
    await writeFile(logPath(directory), damaged);
    const reopened = await FileUpdateJournal.open(directory);
    // Both finishes are lost, so both updates run again: at-least-once.
    expect(idsOf(await reopened.unfinished())).toEqual([1, 2]);
    expect(reopened.snapshot()).toMatchObject({
      fileBytes: unsynced,
      recoveredTailBytes: crashed.length - unsynced,
    });
    await reopened.close();
  });
});

describe("a crash during compaction", () => {
  it("leaves a temporary file that the next open removes, keeping the old log", async () => {
    const { directory, closed: bytes } = await journalWithLastRecord();
    const temporary = join(directory, "journal.log.compacting");
    await writeFile(temporary, bytes.subarray(0, 20));
    const journal = await FileUpdateJournal.open(directory);
    expect(idsOf(await journal.unfinished())).toEqual([1, 2, 3, 4]);
    await journal.close();
    await expect(stat(temporary)).rejects.toMatchObject({ code: "ENOENT" });
  });
});

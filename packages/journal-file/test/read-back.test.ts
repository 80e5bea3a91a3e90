// Reading stored updates back by id: the journal keeps where each unfinished update is in its log
// instead of the update, through compaction and a reopen, and opening a large journal does not
// load what it holds.

import { execFile } from "node:child_process";
import { open } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Update } from "@grammyjs/types";
import { contractUpdate } from "@telepace/testing";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { FileUpdateJournal } from "../src/index.js";
import { idsOf, journalRejection, logPath, temporaryDirectory, updates } from "./helpers.js";

const HEAP_CHILD = fileURLToPath(new URL("./fixtures/open-heap-child.ts", import.meta.url));
const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

const textUpdate = (id: number, text: string, userId?: number): Update =>
  contractUpdate(id, userId === undefined ? { text } : { text, userId });

describe("FileUpdateJournal read-back", () => {
  describe("a journal of 100,000 unfinished updates", () => {
    let directory = "";
    const openInChild = async (mode: "journal" | "intake") => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          "--expose-gc",
          "--conditions=@telepace/source",
          "--import",
          "tsx",
          HEAP_CHILD,
          directory,
          mode,
        ],
        { cwd: PACKAGE },
      );
      return JSON.parse(stdout) as {
        heapGrowthBytes: number;
        unfinished: number;
        readIds: number[];
        intake: { accepted: string; inMemory: number; backlog: number } | null;
      };
    };

    beforeAll(async () => {
      directory = await temporaryDirectory();
      const journal = await FileUpdateJournal.open(directory, {
        compactAfterBytes: Number.POSITIVE_INFINITY,
      });
      const text = "x".repeat(400);
      for (let first = 1; first <= 100_000; first += 2_000) {
        await journal.append(
          Array.from({ length: 2_000 }, (_, index) =>
            textUpdate(first + index, `${first + index} ${text}`, 1 + (index % 50)),
          ),
        );
      }
      await journal.close();
    }, 60_000);

    it("opens without loading them", async () => {
      const report = await openInChild("journal");
      expect(report.unfinished).toBe(100_000);
      expect(report.readIds).toEqual(Array.from({ length: 100 }, (_, index) => index + 1));
      // Their content is 57 MB of JSON, 66 MB of heap when it was loaded; the index of ids and
      // places is about 8 MB.
      expect(report.heapGrowthBytes).toBeLessThan(16 * 1024 * 1024);
    }, 60_000);

    it("is replayed by an intake within maxUnfinished, the rest left in the journal", async () => {
      const report = await openInChild("intake");
      expect(report.unfinished).toBe(100_001);
      expect(report.intake).toEqual({ accepted: "stored", inMemory: 1_000, backlog: 99_001 });
      // The journal's index, the intake's ids of what waits, and 1,000 updates in memory.
      expect(report.heapGrowthBytes).toBeLessThan(24 * 1024 * 1024);
    }, 60_000);
  });

  it("reads back any update text whole, after a compaction and a reopen", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: "grapheme", maxLength: 40 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.string({ unit: "binary", maxLength: 12 }), { maxLength: 4 }),
        async (texts, odd) => {
          const all = [...texts, ...odd, '"],[{', "\\", '\\"]}', "\u2028\ud83d\ude00"];
          const stored = all.map((text, index) => textUpdate(index + 1, text));
          const directory = await temporaryDirectory();
          let journal = await FileUpdateJournal.open(directory);
          await journal.append(stored.slice(0, 3));
          await journal.append(stored.slice(3));
          await journal.finish(2);
          const expected = stored.filter((update) => update.update_id !== 2);
          const backwards = idsOf(expected).reverse();
          expect(await journal.read(backwards)).toEqual([...expected].reverse());
          await journal.compact();
          expect(await journal.read(idsOf(expected))).toEqual(expected);
          await journal.close();
          journal = await FileUpdateJournal.open(directory);
          expect(await journal.read(backwards)).toEqual([...expected].reverse());
          expect(await journal.unfinished()).toEqual(expected);
          await journal.close();
        },
      ),
      { numRuns: 25, seed: 0x7e1e9ace },
    );
  });

  it("keeps reading while appends compact the log under it", async () => {
    const directory = await temporaryDirectory();
    const journal = await FileUpdateJournal.open(directory, { compactAfterBytes: 4_096 });
    await journal.append(updates(...Array.from({ length: 50 }, (_, index) => index + 1)));
    const finished = new Set<number>();
    const reads: { asked: number[]; expected: number[]; read: Promise<readonly Update[]> }[] = [];
    for (let batch = 0; batch < 40; batch++) {
      const first = 51 + batch * 10;
      const appending = journal.append(updates(...Array.from({ length: 10 }, (_, i) => first + i)));
      const asked = [batch + 1, 50 - batch, first - 1, first - 5, batch + 1];
      // What was stored before, less what finished; each once.
      const expected = [...new Set(asked)].filter((id) => !finished.has(id));
      reads.push({ asked, expected, read: journal.read(asked) });
      await appending;
      await journal.finish(first - 5);
      finished.add(first - 5);
    }
    expect(journal.snapshot().compactions).toBeGreaterThan(3);
    for (const { expected, read } of reads) expect(idsOf(await read)).toEqual(expected);
    await journal.close();
  });

  it("rejects a read with ERR_JOURNAL_CORRUPT when the log no longer holds the update", async () => {
    const directory = await temporaryDirectory();
    let journal = await FileUpdateJournal.open(directory);
    await journal.append(updates(1, 2, 3));
    await journal.close();
    journal = await FileUpdateJournal.open(directory);
    // Damage the second update where the index says it is, behind the journal's back.
    const file = await open(logPath(directory), "r+");
    const bytes = await file.readFile();
    const at = bytes.indexOf('{"update_id":2,');
    expect(at).toBeGreaterThan(0);
    await file.write(Buffer.from('{"update_id":9,'), 0, 15, at);
    await file.close();
    expect(idsOf(await journal.read([1, 3]))).toEqual([1, 3]);
    const error = await journalRejection(journal.read([2]));
    expect(error.code).toBe("ERR_JOURNAL_CORRUPT");
    expect(error.message).toContain("update 2");
    await journal.close();
  });
});

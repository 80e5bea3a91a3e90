// How the file journal writes: group commit (one write and one sync for what is queued together,
// no sync for finishes), the dedupe horizon, and compaction by hand, on size and on open.

import { readFile } from "node:fs/promises";
import type { Update } from "@grammyjs/types";
import { describe, expect, it } from "vitest";
import { FileUpdateJournal } from "../src/index.js";
import { idsOf, logPath, temporaryDirectory, updates } from "./helpers.js";

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe("group commit", () => {
  it("writes concurrent appends together with one sync per write", async () => {
    const journal = await FileUpdateJournal.open(await temporaryDirectory());
    const before = journal.snapshot();
    await Promise.all(range(1, 50).map((id) => journal.append(updates(id))));
    const after = journal.snapshot();
    // The first append goes out alone; the 49 queued behind it share the next write.
    expect(after.writes - before.writes).toBeLessThanOrEqual(2);
    expect(after.syncs - before.syncs).toBe(after.writes - before.writes);
    expect(after.appended).toBe(50);
    await journal.close();
  });

  it("writes finishes of one turn as one record, without a sync", async () => {
    const journal = await FileUpdateJournal.open(await temporaryDirectory());
    await journal.append(updates(...range(1, 100)));
    const before = journal.snapshot();
    await Promise.all(range(1, 100).map((id) => journal.finish(id)));
    const after = journal.snapshot();
    expect(after.writes - before.writes).toBe(1);
    // One finish record, after the `synced` record that starts the first write after a sync.
    expect(after.records - before.records).toBe(2);
    expect(after.syncs).toBe(before.syncs);
    expect(after).toMatchObject({ unfinished: 0, finished: 100 });
    await journal.close();
  });

  it("syncs state changes like appends", async () => {
    const journal = await FileUpdateJournal.open(await temporaryDirectory());
    const before = journal.snapshot().syncs;
    await journal.putState("a", 1);
    await journal.deleteState("a");
    await journal.deleteState("a");
    expect(journal.snapshot().syncs - before).toBe(2);
    await journal.close();
  });

  it("resolves a batch of duplicates only after the write it duplicates is synced", async () => {
    const journal = await FileUpdateJournal.open(await temporaryDirectory());
    const order: string[] = [];
    const first = journal.append(updates(1, 2)).then(() => order.push("first"));
    const repeat = journal.append(updates(2, 1)).then((result) => {
      order.push("repeat");
      return result;
    });
    await Promise.all([first, repeat]);
    expect(order).toEqual(["first", "repeat"]);
    expect((await repeat).duplicates).toBe(2);
    await journal.close();
  });

  it("lets close finish what is queued", async () => {
    const directory = await temporaryDirectory();
    const journal = await FileUpdateJournal.open(directory);
    const appending = journal.append(updates(1, 2));
    const closing = journal.close();
    await expect(appending).resolves.toMatchObject({ duplicates: 0 });
    await closing;
    const again = await FileUpdateJournal.open(directory);
    expect(idsOf(await again.unfinished())).toEqual([1, 2]);
    await again.close();
  });
});

describe("the dedupe horizon", () => {
  it("counts ids at or below highestUpdateId - dedupeHorizon as duplicates, also after a reopen", async () => {
    const directory = await temporaryDirectory();
    let journal = await FileUpdateJournal.open(directory, { dedupeHorizon: 10 });
    await journal.append(updates(100));
    expect((await journal.append(updates(90, 91))).appended.map((u) => u.update_id)).toEqual([91]);
    await journal.close();
    journal = await FileUpdateJournal.open(directory, { dedupeHorizon: 10 });
    expect((await journal.append(updates(89, 92))).appended.map((u) => u.update_id)).toEqual([92]);
    await journal.close();
  });

  it("starts over after restartIds, also after a compaction and a reopen", async () => {
    const directory = await temporaryDirectory();
    let journal = await FileUpdateJournal.open(directory, { dedupeHorizon: 10 });
    await journal.append(updates(100));
    await journal.finish(100);
    await journal.restartIds();
    // Below the old floor (90) and at the old top: a new numbering, so new updates.
    expect(idsOf((await journal.append(updates(50, 100))).appended)).toEqual([50, 100]);
    await journal.compact();
    await journal.close();
    journal = await FileUpdateJournal.open(directory, { dedupeHorizon: 10 });
    expect(await journal.highestUpdateId()).toBe(100);
    // The new numbering's own horizon holds: 89 is below 100 - 10, 95 is new, 50 was stored.
    expect(idsOf((await journal.append(updates(89, 95, 50))).appended)).toEqual([95]);
    await journal.close();
  });

  it("bounds the id index by the horizon however many gaps the ids have", async () => {
    const journal = await FileUpdateJournal.open(await temporaryDirectory(), { dedupeHorizon: 20 });
    for (let id = 0; id < 400; id += 2) await journal.append(updates(id));
    expect(journal.snapshot().idRanges).toBeLessThanOrEqual(11);
    // Consecutive ids are one range.
    await journal.append(updates(...range(1000, 500)));
    expect(journal.snapshot().idRanges).toBe(1);
    await journal.close();
  });
});

describe("compaction", () => {
  it("shrinks the log to its live records and keeps them", async () => {
    const directory = await temporaryDirectory();
    let journal = await FileUpdateJournal.open(directory);
    for (let batch = 0; batch < 20; batch++) {
      await journal.append(updates(...range(batch * 10, 10)));
    }
    for (const id of range(0, 199)) await journal.finish(id);
    await journal.putState("job", "x");
    const before = journal.snapshot();
    await journal.compact();
    const after = journal.snapshot();
    expect(after.fileBytes).toBeLessThan(before.fileBytes / 10);
    // The base record, one append record with the unfinished update, one state record.
    expect(after).toMatchObject({ records: 3, compactions: 1, unfinished: 1 });
    await journal.close();
    journal = await FileUpdateJournal.open(directory);
    expect(idsOf(await journal.unfinished())).toEqual([199]);
    expect(await journal.highestUpdateId()).toBe(199);
    expect((await journal.append(updates(5, 200))).duplicates).toBe(1);
    await journal.close();
  });

  it("spreads large unfinished updates over records of about 1 MiB", async () => {
    const directory = await temporaryDirectory();
    let journal = await FileUpdateJournal.open(directory);
    const large = range(1, 5).map((id) => ({ ...updates(id)[0], big: "x".repeat(400_000) }));
    await journal.append(large as Update[]);
    await journal.compact();
    // The base record, then appends of 2, 2 and 1 updates.
    expect(journal.snapshot().records).toBe(4);
    await journal.close();
    journal = await FileUpdateJournal.open(directory);
    expect(await journal.unfinished()).toEqual(large);
    await journal.close();
  });

  it("runs on its own past compactAfterBytes, keeping the log bounded", async () => {
    const directory = await temporaryDirectory();
    let journal = await FileUpdateJournal.open(directory, { compactAfterBytes: 8192 });
    let largest = 0;
    for (let id = 0; id < 300; id++) {
      await journal.append(updates(id));
      if (id >= 3) await journal.finish(id - 3);
      largest = Math.max(largest, journal.snapshot().fileBytes);
    }
    const snapshot = journal.snapshot();
    expect(snapshot.compactions).toBeGreaterThan(3);
    expect(largest).toBeLessThan(8192 + 1024);
    await journal.close();
    journal = await FileUpdateJournal.open(directory);
    expect(idsOf(await journal.unfinished())).toEqual([297, 298, 299]);
    await journal.close();
  });

  it("keeps writes queued during a compaction", async () => {
    const directory = await temporaryDirectory();
    let journal = await FileUpdateJournal.open(directory);
    await journal.append(updates(1, 2, 3));
    await Promise.all([
      journal.compact(),
      journal.append(updates(4)),
      journal.finish(1),
      journal.compact(),
      journal.append(updates(5)),
      journal.putState("k", true),
      journal.finish(4),
    ]);
    await journal.close();
    journal = await FileUpdateJournal.open(directory);
    expect(idsOf(await journal.unfinished())).toEqual([2, 3, 5]);
    expect(await journal.state()).toEqual(new Map([["k", true]]));
    await journal.close();
  });

  it("runs on open when the log is already past compactAfterBytes", async () => {
    const directory = await temporaryDirectory();
    let journal = await FileUpdateJournal.open(directory);
    for (let id = 0; id < 50; id++) await journal.append(updates(id));
    for (let id = 0; id < 50; id++) await journal.finish(id);
    const size = journal.snapshot().fileBytes;
    await journal.close();
    journal = await FileUpdateJournal.open(directory, { compactAfterBytes: size });
    expect(journal.snapshot()).toMatchObject({
      compactions: 1,
      unfinished: 0,
      highestUpdateId: 49,
    });
    expect(journal.snapshot().fileBytes).toBeLessThan(size);
    await journal.close();
  });
});

describe("the log file", () => {
  it("does not grow when a journal is opened and closed with nothing written", async () => {
    const directory = await temporaryDirectory();
    const journal = await FileUpdateJournal.open(directory);
    await journal.append(updates(1));
    await journal.close();
    const size = (await readFile(logPath(directory))).length;
    for (let round = 0; round < 3; round++) await (await FileUpdateJournal.open(directory)).close();
    expect((await readFile(logPath(directory))).length).toBe(size);
  });

  it("starts with the journal header", async () => {
    const directory = await temporaryDirectory();
    const journal = await FileUpdateJournal.open(directory);
    await journal.close();
    expect((await readFile(logPath(directory))).subarray(0, 6).toString()).toBe("TPJRNL");
  });
});

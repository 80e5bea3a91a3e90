// Throughput of FileUpdateJournal on this machine's disk: appends with one fdatasync each, group
// commit under concurrent appends, finishes, reads of stored updates by id, and reopening
// (replaying) a full-size log.
// Run: pnpm --filter @telepace/journal-file bench

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Update } from "@grammyjs/types";
import { FileUpdateJournal } from "../src/index.js";

const DURATION_MS = 2_000;

function textUpdate(updateId: number): Update {
  return {
    update_id: updateId,
    message: {
      message_id: updateId,
      date: 1_700_000_000,
      chat: { id: 1000 + (updateId % 50), type: "private", first_name: "Ada" },
      from: { id: 1000 + (updateId % 50), is_bot: false, first_name: "Ada", language_code: "en" },
      text: "a message of about the length people write to bots, give or take".repeat(2),
    },
  };
}

interface Row {
  scenario: string;
  "updates/s": number;
  "syncs/s": number;
  "updates per sync": number;
  "µs per update": number;
}

async function withJournal<T>(run: (journal: FileUpdateJournal) => Promise<T>): Promise<T> {
  const directory = await mkdtemp(join(tmpdir(), "journal-bench-"));
  const journal = await FileUpdateJournal.open(directory, {
    compactAfterBytes: Number.POSITIVE_INFINITY,
  });
  try {
    return await run(journal);
  } finally {
    await journal.close();
    await rm(directory, { recursive: true, force: true });
  }
}

/** Appends for DURATION_MS with `concurrency` loops of `batchSize`-update batches. */
async function appends(scenario: string, batchSize: number, concurrency: number): Promise<Row> {
  return withJournal(async (journal) => {
    let next = 1;
    const start = performance.now();
    const loop = async () => {
      while (performance.now() - start < DURATION_MS) {
        const batch = Array.from({ length: batchSize }, () => textUpdate(next++));
        await journal.append(batch);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, loop));
    const seconds = (performance.now() - start) / 1000;
    const { appended, syncs } = journal.snapshot();
    return {
      scenario,
      "updates/s": Math.round(appended / seconds),
      "syncs/s": Math.round(syncs / seconds),
      "updates per sync": Math.round((appended / syncs) * 10) / 10,
      "µs per update": Math.round((seconds * 1e6) / appended),
    };
  });
}

/** Appends 100-update batches, then finishes them 100 per turn, as a dispatcher would. */
async function finishes(): Promise<Row> {
  return withJournal(async (journal) => {
    const total = 50_000;
    for (let id = 1; id <= total; id += 100) {
      await journal.append(Array.from({ length: 100 }, (_, index) => textUpdate(id + index)));
    }
    const before = journal.snapshot().syncs;
    const start = performance.now();
    for (let id = 1; id <= total; id += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, index) => journal.finish(id + index)));
    }
    const seconds = (performance.now() - start) / 1000;
    return {
      scenario: "finish, 100 per turn",
      "updates/s": Math.round(total / seconds),
      "syncs/s": Math.round((journal.snapshot().syncs - before) / seconds),
      "updates per sync": Number.NaN,
      "µs per update": Math.round((seconds * 1e6) / total),
    };
  });
}

/** Finishes 100 updates per call, as the intake does with what ended in one turn. */
async function batchedFinishes(): Promise<Row> {
  return withJournal(async (journal) => {
    const total = 50_000;
    for (let id = 1; id <= total; id += 100) {
      await journal.append(Array.from({ length: 100 }, (_, index) => textUpdate(id + index)));
    }
    const start = performance.now();
    for (let id = 1; id <= total; id += 100) {
      await journal.finish(Array.from({ length: 100 }, (_, index) => id + index));
    }
    const seconds = (performance.now() - start) / 1000;
    return {
      scenario: "finish 100 in one call",
      "updates/s": Math.round(total / seconds),
      "syncs/s": 0,
      "updates per sync": Number.NaN,
      "µs per update": Math.round((seconds * 1e6) / total),
    };
  });
}

/**
 * Reads stored updates back by id for DURATION_MS, `count` per call, every `stride`-th id of
 * 20,000 unfinished ones: 1 is a replay page, 6 one principal's updates among others'.
 */
async function reads(scenario: string, count: number, stride: number): Promise<Row> {
  return withJournal(async (journal) => {
    const stored = 20_000;
    for (let id = 1; id <= stored; id += 1_000) {
      await journal.append(Array.from({ length: 1_000 }, (_, index) => textUpdate(id + index)));
    }
    let read = 0;
    let first = 1;
    const start = performance.now();
    while (performance.now() - start < DURATION_MS) {
      if (first + count * stride > stored) first = 1;
      const ids = Array.from({ length: count }, (_, index) => first + index * stride);
      read += (await journal.read(ids)).length;
      first += count * stride;
    }
    const seconds = (performance.now() - start) / 1000;
    return {
      scenario,
      "updates/s": Math.round(read / seconds),
      "syncs/s": 0,
      "updates per sync": Number.NaN,
      "µs per update": Math.round(((seconds * 1e6) / read) * 10) / 10,
    };
  });
}

/** Opens a 16 MiB log (the default compaction size): replay time. */
async function reopen(): Promise<{ bytes: number; records: number; ms: number }> {
  const directory = await mkdtemp(join(tmpdir(), "journal-bench-"));
  try {
    let journal = await FileUpdateJournal.open(directory, {
      compactAfterBytes: Number.POSITIVE_INFINITY,
    });
    let next = 1;
    while (journal.snapshot().fileBytes < 16 * 1024 * 1024) {
      const batch = Array.from({ length: 100 }, () => textUpdate(next++));
      await journal.append(batch);
      await Promise.all(batch.slice(0, 90).map((update) => journal.finish(update.update_id)));
    }
    const { fileBytes, records } = journal.snapshot();
    await journal.close();
    const start = performance.now();
    journal = await FileUpdateJournal.open(directory, {
      compactAfterBytes: Number.POSITIVE_INFINITY,
    });
    const ms = Math.round(performance.now() - start);
    await journal.close();
    return { bytes: fileBytes, records, ms };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
rows.push(await appends("append 1 update, sequential", 1, 1));
rows.push(await appends("append 100 updates, sequential", 100, 1));
rows.push(await appends("append 1 update, 16 concurrent", 1, 16));
rows.push(await finishes());
rows.push(await batchedFinishes());
rows.push(await reads("read 256 consecutive ids", 256, 1));
rows.push(await reads("read 17 ids, every 6th", 17, 6));
console.log(`Node ${process.version}, ${process.platform} ${process.arch}, ${tmpdir()}`);
console.table(rows);
console.log("reopen of a full log:", await reopen());

// The store contract for the journal store: over a file journal (durable; "another" is this
// process after a restart) and over records in memory, and the journal store's own checks.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { FileUpdateJournal } from "@telepace/journal-file";
import { MemoryUpdateJournal } from "@telepace/update-dispatch";
import { afterAll, describe, expect, it } from "vitest";
import { JournalBroadcastStore, MemoryBroadcastStore } from "../src/index.js";
import { DurableRecords } from "./support/crashable-journal.js";
import { describeBroadcastStoreContract } from "./support/store-contract.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describeBroadcastStoreContract("JournalBroadcastStore over a FileUpdateJournal", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "telepace-broadcast-store-"));
  const journal = await FileUpdateJournal.open(dir);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  cleanups.push(() => journal.close());
  return {
    store: new JournalBroadcastStore(journal),
    another: () => new JournalBroadcastStore(journal),
  };
});

describeBroadcastStoreContract("JournalBroadcastStore over records in memory", () => {
  const records = new DurableRecords();
  return {
    store: new JournalBroadcastStore(records.open()),
    another: () => new JournalBroadcastStore(records.open()),
  };
});

describe("JournalBroadcastStore", () => {
  it("works over MemoryUpdateJournal and refuses what is no journal", async () => {
    const store = new JournalBroadcastStore(new MemoryUpdateJournal());
    expect(await store.open("x", { fingerprint: "f", batchSize: 1, end: 0 })).toMatchObject({
      state: "running",
    });
    expect(() => new JournalBroadcastStore({} as never)).toThrow(
      /^Expected `journal` to have a `putState` method \(an update journal\), got /,
    );
    expect(new MemoryBroadcastStore().isShared).toBe(false);
  });

  it("refuses a record it cannot read, naming the broadcast", async () => {
    const journal = new MemoryUpdateJournal();
    await journal.putState("broadcast:bad", { v: 2 });
    await expect(new JournalBroadcastStore(journal).read("bad")).rejects.toMatchObject({
      code: "ERR_BROADCAST_CORRUPT",
      message: expect.stringContaining('"bad"'),
    });
  });

  it("drops position records a crash left after their batch finished", async () => {
    const records = new DurableRecords();
    const store = new JournalBroadcastStore(records.open());
    await store.open("b", { fingerprint: "f", batchSize: 2, end: 2 });
    const claimed = await store.claim("b", "w", 1_000);
    if (claimed.status !== "claimed") throw new Error("not claimed");
    await store.markSettled(claimed.claim, 0, "sent");
    await store.markSettled(claimed.claim, 1, "sent");
    await store.complete(claimed.claim, undefined);
    // As if the process died between the header's write and the deletes.
    records.records.set("broadcast:b:0", "sent");
    const restarted = new JournalBroadcastStore(records.open());
    expect(await restarted.read("b")).toMatchObject({ state: "completed", counts: { sent: 2 } });
    expect([...records.records.keys()]).toEqual(["broadcast:b"]);
  });
});

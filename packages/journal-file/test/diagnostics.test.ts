// The journal's diagnostics_channel events: what is opened, written and compacted, with sizes and
// counts only (never an update's content).

import diagnosticsChannel from "node:diagnostics_channel";
import { afterEach, describe, expect, it } from "vitest";
import { FileUpdateJournal, type JournalFileEvent, journalFileChannels } from "../src/index.js";
import { temporaryDirectory, updates } from "./helpers.js";

const events: JournalFileEvent[] = [];
const listener = (message: unknown) => {
  events.push(message as JournalFileEvent);
};
const names = Object.values(journalFileChannels);

afterEach(() => {
  for (const name of names) diagnosticsChannel.unsubscribe(name, listener);
  events.length = 0;
});

describe("diagnostics channels", () => {
  it("are named telepace:journal-file:<event>", () => {
    expect(journalFileChannels).toEqual({
      opened: "telepace:journal-file:opened",
      written: "telepace:journal-file:written",
      compacted: "telepace:journal-file:compacted",
      failed: "telepace:journal-file:failed",
      resumed: "telepace:journal-file:resumed",
    });
  });

  it("report opening, writes (synced or not) and compaction, without update content", async () => {
    for (const name of names) diagnosticsChannel.subscribe(name, listener);
    const directory = await temporaryDirectory();
    const journal = await FileUpdateJournal.open(directory);
    await journal.append(updates(1, 2));
    await journal.finish(1);
    await journal.compact();
    await journal.close();
    expect(events.map((event) => event.type)).toEqual([
      "opened",
      "written",
      "written",
      "compacted",
    ]);
    expect(events[0]).toMatchObject({ directory, cutBytes: 0, takenOverFrom: null });
    // Each first write after a sync starts with a `synced` record, hence 2 records each.
    expect(events[1]).toMatchObject({ isSynced: true, records: 2 });
    expect(events[2]).toMatchObject({ isSynced: false, records: 2 });
    expect(events.every(Object.isFrozen)).toBe(true);
    expect(JSON.stringify(events)).not.toContain("update 1");
  });
});

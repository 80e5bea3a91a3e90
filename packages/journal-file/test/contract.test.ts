// FileUpdateJournal against the UpdateJournal contract, reopening the same directory for the
// durability tests.

import { describeJournalContract } from "@telepace/testing";
import { FileUpdateJournal } from "../src/index.js";
import { temporaryDirectory } from "./helpers.js";

describeJournalContract("FileUpdateJournal", {
  open: async () => FileUpdateJournal.open(await temporaryDirectory()),
  reopen: async (journal) => {
    await journal.close();
    return FileUpdateJournal.open(journal.snapshot().directory);
  },
});

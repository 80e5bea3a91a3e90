// MemoryUpdateJournal against the UpdateJournal contract every journal keeps (it has no storage
// to reopen, so the durability cases do not apply).

import { describeJournalContract } from "@telepace/testing";
import { MemoryUpdateJournal } from "../src/index.js";

describeJournalContract("MemoryUpdateJournal", {
  open: async () => new MemoryUpdateJournal(),
});

// A FileUpdateJournal in a fresh temporary directory for one bench run, removed afterwards.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { FileUpdateJournal } from "@telepace/journal-file";
import type { UpdateJournal } from "@telepace/update-dispatch";

/** A journal for one run, and how to close and remove it. */
export interface RunJournal {
  readonly journal: UpdateJournal;
  dispose(): Promise<void>;
}

/** Opens a file journal (default options) in a new temporary directory. */
export async function temporaryFileJournal(): Promise<RunJournal> {
  const directory = await mkdtemp(path.join(tmpdir(), "telepace-bench-journal-"));
  const journal = await FileUpdateJournal.open(directory);
  return {
    journal,
    async dispose() {
      await journal.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

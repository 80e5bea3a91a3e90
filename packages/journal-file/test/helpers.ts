// Test helpers of @telepace/journal-file: temporary journal directories removed after each file,
// and batches of the contract suite's updates.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Update } from "@grammyjs/types";
import { contractUpdate } from "@telepace/testing";
import { afterAll } from "vitest";

const created: string[] = [];

afterAll(async () => {
  await Promise.all(created.map((directory) => rm(directory, { recursive: true, force: true })));
});

/** A fresh empty directory under the OS temp dir, removed when the test file ends. */
export async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), "telepace-journal-"));
  created.push(directory);
  return directory;
}

/** The path of the log file inside a journal directory. */
export const logPath = (directory: string): string => join(directory, "journal.log");

/** The contract suite's updates with these ids. */
export const updates = (...ids: number[]): Update[] => ids.map(contractUpdate);

/** The ids of a list of updates, in order. */
export const idsOf = (list: readonly Update[]): number[] => list.map((update) => update.update_id);

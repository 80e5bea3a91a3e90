// Test helpers of @telepace/journal-file: temporary journal directories removed after each file.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

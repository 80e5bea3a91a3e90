// Test helpers of @telepace/journal-file: temporary journal directories removed after each file,
// batches of the contract suite's updates, a journal's rejections, and what root-only tests need.

import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Update } from "@grammyjs/types";
import { contractUpdate } from "@telepace/testing";
import { afterAll, expect } from "vitest";
import { JournalError } from "../src/index.js";

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

/** The `JournalError` a promise rejects with (fails the test when it resolves or throws another). */
export async function journalRejection(promise: Promise<unknown>): Promise<JournalError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(JournalError);
  return error as JournalError;
}

/**
 * Why a test of namespaces (`what`) cannot run here, or `undefined`: it needs Linux, root, and
 * `unshare` with `unshareArgs` to succeed.
 */
export function namespacesUnavailable(
  what: string,
  unshareArgs: readonly string[],
): string | undefined {
  if (process.platform !== "linux") return `${what} are Linux only`;
  if (process.getuid?.() !== 0) {
    return "they need root (CI runs as root; locally: sudo pnpm exec vitest run --project journal-file)";
  }
  const probe = spawnSync("unshare", unshareArgs);
  if (probe.error !== undefined || probe.status !== 0) {
    return `\`unshare ${unshareArgs.join(" ")}\` fails here (it needs util-linux and ${what})`;
  }
  return undefined;
}

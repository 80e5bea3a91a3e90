// A full disk under an UpdateIntake: a child process in a private mount namespace runs the intake
// on a FileUpdateJournal in a 400 KiB tmpfs. When writes fail, the intake keeps the fetched batch
// unconfirmed and probes the journal with backoff (no second fetch, no tight loop), reports the
// outage with the disk's code, and rejects run() only when asked to fail fast. Root only (mount
// namespaces); skipped with a message otherwise.

import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { temporaryDirectory } from "./helpers.js";

const CHILD = fileURLToPath(new URL("./fixtures/full-disk-intake-child.ts", import.meta.url));
const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

const canMount =
  process.getuid?.() === 0 &&
  spawnSync("unshare", ["--mount", "--fork", "true"], { stdio: "ignore" }).status === 0;
if (!canMount) {
  console.warn(
    "intake-full-disk.test.ts skipped: needs root and `unshare --mount` for a private tmpfs",
  );
}

interface ChildReport {
  readonly rejection: { readonly code: string; readonly causeCode: string } | undefined;
  readonly journalFailures: number;
  readonly journalOutageMs: number;
  readonly backoffs: number;
  readonly appended: number;
  readonly processed: number;
  readonly polls: number;
  readonly highestOffset: number;
  readonly failedCodes: readonly (string | null)[];
}

async function runOnFullDisk(journalFailure: "retry" | "reject"): Promise<ChildReport> {
  const directory = await temporaryDirectory();
  const script =
    'mount -t tmpfs -o size=400k tmpfs "$0" && exec "$1" --conditions=@telepace/source --import tsx "$2" "$0" "$3" 2500';
  const child = spawn(
    "unshare",
    ["--mount", "--fork", "sh", "-c", script, directory, process.execPath, CHILD, journalFailure],
    { cwd: PACKAGE, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const [code] = (await once(child, "exit")) as [number | null];
  expect({ code, stderr }).toMatchObject({ code: 0 });
  return JSON.parse(stdout.trim()) as ChildReport;
}

/**
 * Batches of 10 updates of 20 KB were stored until the disk was full; everything stored was
 * processed and confirmed, and the batch that did not fit was fetched once and never confirmed.
 */
function expectStoredUntilFull(report: ChildReport): void {
  expect(report.appended).toBeGreaterThan(0);
  expect(report.appended).toBeLessThan(200);
  expect(report.processed).toBe(report.appended);
  expect(report.highestOffset).toBe(report.appended + 1);
  expect(report.polls).toBe(report.appended / 10 + 1);
}

describe.skipIf(!canMount)("an UpdateIntake on a file journal when the disk is full", () => {
  it("keeps the batch unconfirmed, probes the journal with backoff and reports the outage", async () => {
    const report = await runOnFullDisk("retry");
    expectStoredUntilFull(report);
    expect(report.rejection).toBeUndefined();
    expect(report.backoffs).toBeGreaterThanOrEqual(2); // 0.5 s, then 1 s, within 2.5 s
    expect(report.backoffs).toBeLessThanOrEqual(3);
    expect(report.journalFailures).toBeGreaterThanOrEqual(3);
    expect(report.journalOutageMs).toBeGreaterThan(1_000);
    expect(report.failedCodes).toEqual(["ERR_JOURNAL_IO"]);
  }, 30_000);

  it("with journalFailure: reject, run() rejects with ERR_POLLING_JOURNAL_FAILED at once", async () => {
    const report = await runOnFullDisk("reject");
    expect(report.rejection).toEqual({
      code: "ERR_POLLING_JOURNAL_FAILED",
      causeCode: "ERR_JOURNAL_IO",
    });
    expectStoredUntilFull(report);
    expect(report.backoffs).toBe(0);
  }, 30_000);
});

// The machine and revision a run was measured on, recorded with every figure so a result can be
// compared only with results from the same setup.

import { execFileSync } from "node:child_process";
import os from "node:os";

/** Where and on what a benchmark ran. */
export interface Environment {
  readonly node: string;
  readonly v8: string;
  readonly platform: string;
  readonly arch: string;
  readonly cpuModel: string;
  readonly cpuCount: number;
  /** Load average over the last minute when the run started (other work on the machine). */
  readonly loadAverage1m: number;
  readonly totalMemoryBytes: number;
  /** The git commit of the checkout, or "unknown" outside a repository. */
  readonly commit: string;
  /** Whether the checkout had uncommitted changes. */
  readonly isDirty: boolean | "unknown";
  /** ISO time the run started. */
  readonly startedAt: string;
}

function git(args: readonly string[]): string | undefined {
  try {
    return execFileSync("git", args, {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 10_000,
    }).trim();
  } catch {
    return undefined;
  }
}

/** Collects the environment once, at the start of a run. */
export function collectEnvironment(): Environment {
  const cpus = os.cpus();
  const commit = git(["rev-parse", "HEAD"]);
  const status = commit === undefined ? undefined : git(["status", "--porcelain"]);
  return {
    node: process.version,
    v8: process.versions.v8,
    platform: process.platform,
    arch: process.arch,
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    cpuCount: cpus.length,
    loadAverage1m: os.loadavg()[0] ?? 0,
    totalMemoryBytes: os.totalmem(),
    commit: commit ?? "unknown",
    isDirty: status === undefined ? "unknown" : status.length > 0,
    startedAt: new Date().toISOString(),
  };
}

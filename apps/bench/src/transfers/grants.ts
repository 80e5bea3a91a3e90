// The grant-overhead microbenchmark: many transfers taking grants in a loop with no I/O, so what
// is timed is the gate's own work per grant (real time, unlike the simulated link runs). CPU
// time is what the ratios use: on a shared machine, wall time also counts other processes.

import { MediaSchedulerRegistry } from "@telepace/media-scheduler";
import PQueue from "p-queue";

const KiB = 1024;
const MiB = 1024 * KiB;

/** Sizes of the microbenchmark. */
export interface GrantConfig {
  readonly transfers: number;
  readonly grantsPerTransfer: number;
}

/** What takes the grants: the scheduler, p-queue, or nothing (the bare loop). */
export type GrantKind = "none" | "scheduler" | "p-queue";

/** The contenders, bare loop first; `name` is what the tables print. */
export const GRANT_CONTENDERS: readonly { readonly id: GrantKind; readonly name: string }[] = [
  { id: "none", name: "no gate (the loop alone)" },
  { id: "scheduler", name: "telepace media-scheduler (upload, 8 MiB = 128 permits of 64 KiB)" },
  { id: "p-queue", name: "p-queue (concurrency 128)" },
];

/** One timed loop. */
export interface GrantSample {
  readonly elapsedMs: number;
  /** User + system CPU time of the process during the loop, ms. */
  readonly cpuMs: number;
}

/** 1,000 transfers (or tasks) each taking grants in a loop; nothing else happens per grant. */
export async function grantLoop(config: GrantConfig, kind: GrantKind): Promise<GrantSample> {
  const { transfers, grantsPerTransfer } = config;
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  if (kind === "scheduler") {
    // Uploads have no transfer-count caps, so all 1,000 transfers sit in the rotation at once.
    const registry = new MediaSchedulerRegistry();
    await Promise.all(
      Array.from({ length: transfers }, async () => {
        using transfer = registry.open({ dc: "grants", direction: "upload", sizeBytes: MiB });
        for (let grant = 0; grant < grantsPerTransfer; grant++) {
          using _permit = await transfer.acquire(64 * KiB);
          await Promise.resolve();
        }
      }),
    );
    await registry.close();
  } else if (kind === "p-queue") {
    const queue = new PQueue({ concurrency: (8 * MiB) / (64 * KiB) });
    await Promise.all(
      Array.from({ length: transfers }, async () => {
        for (let grant = 0; grant < grantsPerTransfer; grant++) {
          await queue.add(async () => {
            await Promise.resolve();
          });
        }
      }),
    );
  } else {
    await Promise.all(
      Array.from({ length: transfers }, async () => {
        for (let grant = 0; grant < grantsPerTransfer; grant++) {
          await (async () => {
            await Promise.resolve();
          })();
        }
      }),
    );
  }
  const elapsedMs = performance.now() - startedAt;
  const cpu = process.cpuUsage(cpuBefore);
  return { elapsedMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Runs each loop once at a tenth of the size, so the first measured round is not the JIT's. */
export async function warmUpGrantLoops(config: GrantConfig): Promise<void> {
  const small = { ...config, transfers: Math.max(1, Math.round(config.transfers / 10)) };
  for (const { id } of GRANT_CONTENDERS) await grantLoop(small, id);
}

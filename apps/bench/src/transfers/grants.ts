// The grant-overhead microbenchmark: many transfers taking grants in a loop with no I/O, so what
// is timed is the gate's own work per grant (real time, unlike the simulated link runs).

import { MediaSchedulerRegistry } from "@telepace/media-scheduler";
import PQueue from "p-queue";
import { summarize } from "../stats.js";

const KiB = 1024;
const MiB = 1024 * KiB;

/** Sizes of the microbenchmark. */
export interface GrantConfig {
  readonly transfers: number;
  readonly grantsPerTransfer: number;
  readonly repeats: number;
}

/** Figures of the grant-overhead microbenchmark. */
export interface GrantFigures {
  readonly contender: string;
  readonly grants: number;
  readonly elapsedMs: number;
  /** Elapsed minus the no-gate loop, per grant, µs. */
  readonly overheadPerGrantUs: number;
}

/** 1,000 transfers (or tasks) each taking grants in a loop; nothing else happens per grant. */
async function grantLoop(
  config: GrantConfig,
  kind: "scheduler" | "p-queue" | "none",
): Promise<number> {
  const { transfers, grantsPerTransfer } = config;
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
  return performance.now() - startedAt;
}

export async function grantOverhead(config: GrantConfig): Promise<GrantFigures[]> {
  const kinds = ["none", "scheduler", "p-queue"] as const;
  const samples = new Map<string, number[]>(kinds.map((kind) => [kind, []]));
  for (const kind of kinds) await grantLoop({ ...config, transfers: 100 }, kind);
  for (let round = 0; round < config.repeats; round++) {
    for (const kind of kinds) samples.get(kind)?.push(await grantLoop(config, kind));
  }
  const median = (kind: string): number => summarize(samples.get(kind) ?? []).p50;
  const grants = config.transfers * config.grantsPerTransfer;
  const floor = median("none");
  const names: Record<(typeof kinds)[number], string> = {
    none: "no gate (the loop alone)",
    scheduler: "telepace media-scheduler (upload, 8 MiB = 128 permits of 64 KiB)",
    "p-queue": "p-queue (concurrency 128)",
  };
  return kinds.map((kind) => ({
    contender: names[kind],
    grants,
    elapsedMs: median(kind),
    overheadPerGrantUs: kind === "none" ? 0 : ((median(kind) - floor) * 1000) / grants,
  }));
}

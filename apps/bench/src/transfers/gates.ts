// What stands between a transfer and its chunk requests: byte permits of the media scheduler,
// task slots of p-queue (optionally with small files first), or nothing.

import type { Clock } from "@telepace/core";
import {
  MediaSchedulerRegistry,
  type MediaSchedulerRegistryOptions,
} from "@telepace/media-scheduler";
import PQueue from "p-queue";

/** One file's way through a gate. */
export interface GatedTransfer {
  /** Runs `request` once the gate lets `bytes` through. */
  run<T>(bytes: number, request: () => Promise<T>): Promise<T>;
  /** The file is done (or given up). */
  close(): void;
}

/** Makes a fresh gate for one run, on the run's clock. */
export type GateFactory = (clock: Clock) => Gate;

/** A gate shared by all transfers of a run. */
export interface Gate {
  readonly name: string;
  readonly settings: Readonly<Record<string, number | string | boolean>>;
  open(file: { readonly sizeBytes: number; readonly kind: "small" | "large" }): GatedTransfer;
  /** Releases the gate's resources at the end of a run. */
  dispose(): Promise<void>;
}

/** The data centre the sim stands for: the Bot API has one, its host. */
const DC = "bot-api-sim";

/**
 * @telepace/media-scheduler: a permit of the chunk's bytes before each request. `label` names
 * the configuration; the settings in the JSON are read back from the registry.
 */
export function schedulerGate(
  clock: Clock,
  label: string,
  options: MediaSchedulerRegistryOptions = {},
): Gate {
  const registry = new MediaSchedulerRegistry({ ...options, clock });
  const limits = registry.limits.download;
  return {
    name: `telepace media-scheduler (${label})`,
    settings: {
      maxBytesInFlight: limits.maxBytesInFlight,
      maxActiveSmallTransfers: String(limits.maxActiveSmallTransfers),
      maxActiveLargeTransfers: String(limits.maxActiveLargeTransfers),
      maxLargeBytesInFlight: String(limits.maxLargeBytesInFlight),
    },
    open(file) {
      const transfer = registry.open({ dc: DC, direction: "download", sizeBytes: file.sizeBytes });
      return {
        async run(bytes, request) {
          await using _permit = await transfer.acquire(bytes);
          return await request();
        },
        close: () => transfer.close(),
      };
    },
    dispose: () => registry.close({ timeoutMs: 1_000 }),
  };
}

/**
 * p-queue at a fixed concurrency: each chunk request is a task. With `smallFirst`, tasks of small
 * files get a higher priority, the documented way to let urgent work overtake.
 */
export function pQueueGate(concurrency: number, smallFirst: boolean): Gate {
  const queue = new PQueue({ concurrency });
  return {
    name: `p-queue (concurrency ${concurrency}${smallFirst ? ", small files first" : ""})`,
    settings: { concurrency, smallFirst },
    open(file) {
      const priority = smallFirst && file.kind === "small" ? 1 : 0;
      return {
        run: (_bytes, request) => queue.add(request, { priority }),
        close() {},
      };
    },
    async dispose() {
      queue.clear();
      await queue.onIdle();
    },
  };
}

/** No limit: every request starts at once. */
export function noLimitGate(): Gate {
  return {
    name: "no limit",
    settings: {},
    open: () => ({ run: (_bytes, request) => request(), close() {} }),
    dispose: async () => {},
  };
}

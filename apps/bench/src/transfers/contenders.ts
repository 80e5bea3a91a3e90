// The gates each transfer scenario compares, with stable ids for the summary: the media
// scheduler at its defaults and in named configurations, p-queue at the concurrency that holds
// as many chunks as the scheduler's budget, and no gate at all.

import { mediaSchedulerDefaults, type ResolvedDirectionLimits } from "@telepace/media-scheduler";
import { CHUNK_BYTES } from "./files.js";
import { type GateFactory, noLimitGate, pQueueGate, schedulerGate } from "./gates.js";

const MiB = 1024 * 1024;

/** A gate of one scenario, with a stable id for the summary. */
export interface Contender {
  readonly id: string;
  readonly make: GateFactory;
}

/** The p-queue concurrency holding as many 512 KiB chunks as the scheduler's 16 MiB budget. */
export const P_QUEUE_CONCURRENCY = mediaSchedulerDefaults.download.maxBytesInFlight / CHUNK_BYTES;

/** The original scheduler's download limits: no separate cap for large transfers. */
const ORIGINAL_DOWNLOAD = {
  maxBytesInFlight: 16 * MiB,
  maxActiveSmallTransfers: 5,
  maxActiveLargeTransfers: 2,
  maxLargeBytesInFlight: Number.POSITIVE_INFINITY,
} as const;

function cap(value: number): string {
  return value === Number.POSITIVE_INFINITY ? "uncapped" : String(value);
}

/** Download limits in a few words: `16 MiB, large 4 MiB, slots 5 small + 2 large`. */
export function describeDownload(limits: ResolvedDirectionLimits): string {
  const large = limits.maxLargeBytesInFlight;
  const largeText =
    large === Number.POSITIVE_INFINITY ? "large uncapped" : `large ${large / MiB} MiB`;
  const slots =
    limits.maxActiveSmallTransfers === Number.POSITIVE_INFINITY &&
    limits.maxActiveLargeTransfers === Number.POSITIVE_INFINITY
      ? "no slot caps"
      : `slots ${cap(limits.maxActiveSmallTransfers)} small + ${cap(limits.maxActiveLargeTransfers)} large`;
  return `${limits.maxBytesInFlight / MiB} MiB, ${largeText}, ${slots}`;
}

const defaults: Contender = {
  id: "defaults",
  make: (clock) =>
    schedulerGate(clock, `defaults: ${describeDownload(mediaSchedulerDefaults.download)}`),
};

const original: Contender = {
  id: "originalLimits",
  make: (clock) =>
    schedulerGate(clock, `the original's limits: ${describeDownload(ORIGINAL_DOWNLOAD)}`, {
      download: ORIGINAL_DOWNLOAD,
    }),
};

const pQueueFifo: Contender = {
  id: "pQueueFifo",
  make: () => pQueueGate(P_QUEUE_CONCURRENCY, false),
};

const noLimit: Contender = { id: "noLimit", make: () => noLimitGate() };

/** The mixed scenarios' contenders. */
export function mixedContenders(): Contender[] {
  const large8 = { ...mediaSchedulerDefaults.download, maxLargeBytesInFlight: 8 * MiB };
  return [
    defaults,
    {
      id: "large8MiB",
      make: (clock) =>
        schedulerGate(clock, `defaults with large 8 MiB: ${describeDownload(large8)}`, {
          download: { maxLargeBytesInFlight: large8.maxLargeBytesInFlight },
        }),
    },
    original,
    pQueueFifo,
    { id: "pQueueSmallFirst", make: () => pQueueGate(P_QUEUE_CONCURRENCY, true) },
    noLimit,
  ];
}

/** The contenders of the mixed load at other round trips. */
export const ROUND_TRIP_IDS = [
  "defaults",
  "originalLimits",
  "pQueueSmallFirst",
  "noLimit",
] as const;

/** The equal-files scenario's contenders, every one at its defaults. */
export function fairnessContenders(): Contender[] {
  return [defaults, original, pQueueFifo, noLimit];
}

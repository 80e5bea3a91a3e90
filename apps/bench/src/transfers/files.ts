// The files of the transfer comparison: their sizes, kinds and start times, and the Range chunks
// each one is downloaded in — the same plan for every contender.

import { randomInt, seededRandom } from "../random.js";

/** Bytes per Range request; a common chunk size for Bot API and MTProto downloads. */
export const CHUNK_BYTES = 512 * 1024;

const KiB = 1024;

/** One Range request of a file. */
export interface Chunk {
  readonly start: number;
  readonly length: number;
}

/** The chunks of a file, in order. */
export function chunksOf(sizeBytes: number): Chunk[] {
  const chunks: Chunk[] = [];
  for (let start = 0; start < sizeBytes; start += CHUNK_BYTES) {
    chunks.push({ start, length: Math.min(CHUNK_BYTES, sizeBytes - start) });
  }
  return chunks;
}

/** A file to download: a name, a size, a kind and when its download starts. */
export interface FilePlan {
  readonly name: string;
  readonly sizeBytes: number;
  readonly kind: "small" | "large";
  /** When its download starts, ms after the start of the run. */
  readonly startMs: number;
}

/** Large files from the start and small ones arriving at a steady pace. */
export interface MixedPlan {
  readonly large: { readonly count: number; readonly sizeBytes: number };
  readonly small: {
    readonly count: number;
    readonly minBytes: number;
    readonly maxBytes: number;
    /** The first small download starts this long after the large ones, ms. */
    readonly firstStartMs: number;
    /** Gap between small download starts, ms. */
    readonly intervalMs: number;
  };
}

/** The mixed workload's files, small sizes drawn from `seed`. */
export function mixedPlans(plan: MixedPlan, seed: number): FilePlan[] {
  const random = seededRandom(seed);
  const plans: FilePlan[] = [];
  for (let index = 0; index < plan.large.count; index++) {
    plans.push({
      name: `large-${index}`,
      sizeBytes: plan.large.sizeBytes,
      kind: "large",
      startMs: 0,
    });
  }
  for (let index = 0; index < plan.small.count; index++) {
    plans.push({
      name: `small-${index}`,
      sizeBytes: randomInt(random, plan.small.minBytes / KiB, plan.small.maxBytes / KiB) * KiB,
      kind: "small",
      startMs: plan.small.firstStartMs + index * plan.small.intervalMs,
    });
  }
  return plans;
}

/** `count` equal files started together. */
export function equalPlans(
  count: number,
  sizeBytes: number,
  largeThresholdBytes: number,
): FilePlan[] {
  return Array.from({ length: count }, (_, index) => ({
    name: `equal-${index}`,
    sizeBytes,
    kind: sizeBytes >= largeThresholdBytes ? ("large" as const) : ("small" as const),
    startMs: 0,
  }));
}

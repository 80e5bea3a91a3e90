// A broadcast's live view: its state and mode, counts over every process as this one knows them,
// what is left, the pace, and the time left at it.

import type { BroadcastMode, BroadcastRunState } from "./events.js";
import { type BroadcastCounts, settledOf } from "./outcome.js";

/** A live view of a broadcast, as this process sees it. */
export interface BroadcastSnapshot {
  readonly id: string;
  readonly state: BroadcastRunState;
  readonly mode: BroadcastMode;
  /** It existed in the store when this run started. */
  readonly resumed: boolean;
  /** The number of recipients, once known. */
  readonly total: number | undefined;
  /**
   * Outcomes so far: the store's for finished batches (every process's, as of this process's
   * last look) plus this process's open batches.
   */
  readonly counts: BroadcastCounts;
  /** Recipients with an outcome. */
  readonly settled: number;
  /** Recipients without one yet; `undefined` until the total is known. */
  readonly remaining: number | undefined;
  /** Sends of this process waiting in the outbox. */
  readonly queued: number;
  /** Sends of this process whose request started and has not been answered. */
  readonly inFlight: number;
  /** Batches this process holds. */
  readonly batches: number;
  /** Recipients settled per second by this process, over the last 10 s of its clock. */
  readonly ratePerSecond: number;
  /** Clock ms until the remaining recipients are reached at that rate; `undefined` if unknown. */
  readonly etaMs: number | undefined;
  /** Store calls that failed (each retried after a backoff). */
  readonly storeFailures: number;
}

/** The figures a snapshot is made of; the rest is derived. */
export type SnapshotFigures = Omit<BroadcastSnapshot, "settled" | "remaining" | "etaMs">;

/** A frozen snapshot from `figures`: settled, remaining and the ETA computed. */
export function snapshotOf(figures: SnapshotFigures): BroadcastSnapshot {
  const settled = settledOf(figures.counts);
  const remaining = figures.total === undefined ? undefined : Math.max(0, figures.total - settled);
  const rate = figures.ratePerSecond;
  const etaMs =
    remaining === undefined
      ? undefined
      : remaining === 0
        ? 0
        : rate > 0
          ? (remaining / rate) * 1000
          : undefined;
  return Object.freeze({ ...figures, settled, remaining, etaMs });
}

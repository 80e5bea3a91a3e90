// One batch this process works on: its claim, how many of its positions still await a durable
// outcome, whether all were read, and the counts of the ones settled so far.

import {
  addCounts,
  type BroadcastCounts,
  countSettled,
  type MutableCounts,
  type SettledPosition,
  zeroCounts,
} from "./outcome.js";
import type { BatchClaim } from "./store.js";

/** A claimed batch in progress. */
export class BatchRun {
  readonly claim: BatchClaim;
  /** Positions handed out (to a send, or to be recorded) whose outcome is not durable yet. */
  open = 0;
  /** Every position was read (or the recipients ended inside the batch). */
  allRead = false;
  /** Where the recipients ended, when inside this batch. */
  end: number | undefined;
  /** The lease passed to another process: nothing more is written for it. */
  lost = false;
  /** Its `complete` is under way. */
  completing = false;
  readonly #counts = zeroCounts();

  constructor(claim: BatchClaim) {
    this.claim = claim;
  }

  /** Settled positions of the batch known here (earlier holders' included). */
  get counts(): BroadcastCounts {
    return this.#counts;
  }

  /** Whether everything of it is read and durable: it can be completed. */
  get isDone(): boolean {
    return this.allRead && this.open === 0 && !this.lost && !this.completing;
  }

  count(settled: SettledPosition): void {
    countSettled(this.#counts, settled);
  }

  /** Adds this batch's counts into `into`. */
  addTo(into: MutableCounts): void {
    addCounts(into, this.#counts);
  }
}

// The bookkeeping of update ids: which are open, which finished recently (to suppress duplicates),
// and the safe offset watermark that follows — the highest update_id at or below which every
// update the dispatcher was given has settled.

import { BinaryHeap } from "@telepace/core";

/** What the dispatcher does with update ids: an {@link UpdateLedger}, or {@link UNTRACKED_IDS}. */
export interface IdLedger {
  isDuplicate(id: number): boolean;
  open(id: number): void;
  finish(id: number): void;
  release(id: number): void;
  hold(id: number): void;
  readonly watermark: number | undefined;
}

function ignore(): void {}

/**
 * A ledger that keeps nothing, for the intake's dispatcher: its journal is the record of ids (it
 * stores each once and hands each stored one over once), and the intake confirms offsets by what
 * it stored, not by a watermark.
 */
export const UNTRACKED_IDS: IdLedger = Object.freeze({
  isDuplicate: () => false,
  open: ignore,
  finish: ignore,
  release: ignore,
  hold: ignore,
  watermark: undefined,
});

/**
 * Tracks update ids for duplicate suppression and the offset watermark. An id is:
 * - open: waiting for capacity, queued, or running;
 * - held: withdrawn without being processed (an aborted wait, or left over by `close()`); it keeps
 *   the watermark below it until the same id is opened or released again;
 * - settled: processed to any outcome, or rejected at a bound (the caller owns it then).
 */
export class UpdateLedger implements IdLedger {
  readonly #open = new Set<number>();
  readonly #held = new Set<number>();
  // Finished ids by slot (`update_id` mod the window): an array write per finish and a read per
  // check, no hashing and nothing to grow. Telegram numbers updates consecutively, so the slots
  // hold the last `windowSize` ids; NaN marks a slot never written.
  readonly #finished: Float64Array;
  readonly #windowSize: number;
  // Min-heap over open and held ids with lazy deletion: settled ids are dropped when they reach
  // the top, and the heap is compacted when stale entries outnumber live ones. Kept only once the
  // watermark has been read: a dispatcher whose watermark nobody reads pays nothing for it.
  readonly #lowest = new BinaryHeap<number>((a, b) => a - b);
  #isTrackingLowest = false;
  // Max-heap over held ids with lazy deletion, so forgetting the highest held id beyond the limit
  // costs O(log n) instead of a scan of every held id.
  readonly #highest = new BinaryHeap<number>((a, b) => b - a);
  readonly #heldLimit: number;
  #highestSettled: number | undefined;

  /**
   * @param windowSize - slots of finished ids remembered for duplicate suppression.
   * @param heldLimit - held ids remembered; beyond it the highest is forgotten, because the
   *   lowest held id alone keeps the watermark below every forgotten one.
   */
  constructor(windowSize: number, heldLimit: number) {
    this.#windowSize = windowSize;
    this.#finished = new Float64Array(windowSize).fill(Number.NaN);
    this.#heldLimit = heldLimit;
  }

  /** Whether `id` is open, or its slot still holds it as finished. */
  isDuplicate(id: number): boolean {
    return this.#open.has(id) || (this.#windowSize > 0 && this.#finished[this.#slot(id)] === id);
  }

  /** `id` was accepted or is waiting for capacity. */
  open(id: number): void {
    if (this.#held.size > 0) this.#held.delete(id);
    this.#open.add(id);
    if (this.#isTrackingLowest) this.#lowest.push(id);
  }

  /** `id` was processed, whatever the outcome. */
  finish(id: number): void {
    this.#open.delete(id);
    this.#raise(id);
    if (this.#windowSize > 0) this.#finished[this.#slot(id)] = id;
    this.#compact();
  }

  /** `id` was rejected at a bound: the caller was told and owns it, so it no longer holds back. */
  release(id: number): void {
    this.#open.delete(id);
    this.#held.delete(id);
    this.#raise(id);
    this.#compact();
  }

  /** `id` was withdrawn unprocessed: it holds the watermark below it. */
  hold(id: number): void {
    this.#open.delete(id);
    this.#held.add(id);
    if (this.#isTrackingLowest) this.#lowest.push(id);
    this.#highest.push(id);
    if (this.#held.size > this.#heldLimit) this.#forgetHighestHeld();
    this.#compact();
  }

  /**
   * The highest update_id such that every update at or below it that the ledger saw has settled
   * and none is held; `undefined` until something settles. A poller confirms with
   * `offset = watermark + 1`.
   */
  get watermark(): number | undefined {
    const highest = this.#highestSettled;
    if (highest === undefined) return undefined;
    if (!this.#isTrackingLowest) {
      // The first read: from now on every open and held id goes into the heap.
      this.#isTrackingLowest = true;
      this.#refillLowest();
    }
    for (;;) {
      const lowest = this.#lowest.peek();
      if (lowest === undefined) return highest;
      if (this.#isLive(lowest)) return Math.min(highest, lowest - 1);
      this.#lowest.pop();
    }
  }

  #slot(id: number): number {
    const slot = id % this.#windowSize;
    return slot < 0 ? slot + this.#windowSize : slot;
  }

  #isLive(id: number): boolean {
    return this.#open.has(id) || this.#held.has(id);
  }

  #raise(id: number): void {
    if (this.#highestSettled === undefined || id > this.#highestSettled) this.#highestSettled = id;
  }

  #forgetHighestHeld(): void {
    for (;;) {
      const highest = this.#highest.pop();
      if (highest === undefined) return;
      if (this.#held.delete(highest)) return;
    }
  }

  /** The lowest-id heap from the live ids alone. */
  #refillLowest(): void {
    this.#lowest.clear();
    for (const id of this.#open) this.#lowest.push(id);
    for (const id of this.#held) this.#lowest.push(id);
  }

  /** Rebuilds a heap once its stale entries outnumber its live ones (amortised O(1) per push). */
  #compact(): void {
    const live = this.#open.size + this.#held.size;
    if (this.#isTrackingLowest && this.#lowest.size > 2 * live + 64) this.#refillLowest();
    if (this.#highest.size > 2 * this.#held.size + 64) {
      this.#highest.clear();
      for (const id of this.#held) this.#highest.push(id);
    }
  }
}

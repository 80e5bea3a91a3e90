// The bookkeeping of update ids: which are open, which finished recently (to suppress duplicates),
// and the safe offset watermark that follows — the highest update_id at or below which every
// update the dispatcher was given has settled.

import { BinaryHeap } from "@telepace/core";

/**
 * Tracks update ids for duplicate suppression and the offset watermark. An id is:
 * - open: waiting for capacity, queued, or running;
 * - held: withdrawn without being processed (an aborted wait, or left over by `close()`); it keeps
 *   the watermark below it until the same id is opened or released again;
 * - settled: processed to any outcome, or rejected at a bound (the caller owns it then).
 */
export class UpdateLedger {
  readonly #open = new Set<number>();
  readonly #held = new Set<number>();
  // Min-heap over open and held ids with lazy deletion: settled ids are dropped when they reach
  // the top, and the heap is rebuilt when stale entries outnumber live ones.
  readonly #lowest = new BinaryHeap<number>((a, b) => a - b);
  // Max-heap over held ids with lazy deletion, so forgetting the highest held id beyond the limit
  // costs O(log n) instead of a scan of every held id.
  readonly #highest = new BinaryHeap<number>((a, b) => b - a);
  // Finished ids for duplicate suppression: a ring of the last `windowSize` finishes, and for each
  // remembered id the position of its latest finish (an id evicted from the ring is forgotten only
  // when that was its latest finish). A Set used as a FIFO would be O(deleted) per eviction in V8.
  readonly #recent = new Map<number, number>();
  readonly #ring: number[] = [];
  #finishes = 0;
  readonly #windowSize: number;
  readonly #heldLimit: number;
  #highestSettled: number | undefined;

  /**
   * @param windowSize - finished ids remembered for duplicate suppression.
   * @param heldLimit - held ids remembered; beyond it the highest is forgotten, because the
   *   lowest held id alone keeps the watermark below every forgotten one.
   */
  constructor(windowSize: number, heldLimit: number) {
    this.#windowSize = windowSize;
    this.#heldLimit = heldLimit;
  }

  /** Whether `id` is open, or finished within the window. */
  isDuplicate(id: number): boolean {
    return this.#open.has(id) || this.#recent.has(id);
  }

  /** `id` was accepted or is waiting for capacity. */
  open(id: number): void {
    this.#held.delete(id);
    this.#open.add(id);
    this.#lowest.push(id);
  }

  /** `id` was processed, whatever the outcome. */
  finish(id: number): void {
    this.#open.delete(id);
    this.#raise(id);
    if (this.#windowSize > 0) this.#remember(id);
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
    this.#lowest.push(id);
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
    for (;;) {
      const lowest = this.#lowest.peek();
      if (lowest === undefined) return highest;
      if (this.#open.has(lowest) || this.#held.has(lowest)) return Math.min(highest, lowest - 1);
      this.#lowest.pop();
    }
  }

  #remember(id: number): void {
    const position = this.#finishes++;
    const slot = position % this.#windowSize;
    if (position >= this.#windowSize) {
      const evicted = this.#ring[slot] as number;
      if (this.#recent.get(evicted) === position - this.#windowSize) this.#recent.delete(evicted);
    }
    this.#ring[slot] = id;
    this.#recent.set(id, position);
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

  /** Rebuilds a heap once its stale entries outnumber its live ones (amortised O(1) per push). */
  #compact(): void {
    const live = this.#open.size + this.#held.size;
    if (this.#lowest.size > 2 * live + 64) {
      this.#lowest.clear();
      for (const id of this.#open) this.#lowest.push(id);
      for (const id of this.#held) this.#lowest.push(id);
    }
    if (this.#highest.size > 2 * this.#held.size + 64) {
      this.#highest.clear();
      for (const id of this.#held) this.#highest.push(id);
    }
  }
}

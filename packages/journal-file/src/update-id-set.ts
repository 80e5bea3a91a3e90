// The set of update ids a journal has stored, kept as sorted ranges: Telegram's ids are nearly
// consecutive, so a million stored ids usually take one range, and a floor caps the rest.

import type { IdRanges } from "./record-codec.js";

/**
 * Sorted, disjoint, non-adjacent inclusive ranges of update ids. `raiseFloor(f)` declares every
 * id `<= f` stored, which is how the dedupe horizon bounds the number of ranges.
 */
export class UpdateIdSet {
  #starts: number[] = [];
  #ends: number[] = [];

  /** Rebuilds a set from {@link ranges} output. */
  static from(ranges: IdRanges): UpdateIdSet {
    const set = new UpdateIdSet();
    for (const [start, end] of ranges) set.#addRange(start, end);
    return set;
  }

  /** How many ranges the set holds (its memory, in pairs of numbers). */
  get rangeCount(): number {
    return this.#starts.length;
  }

  /** The index of the last range starting at or before `id`, or -1. */
  #rangeBefore(id: number): number {
    let low = 0;
    let high = this.#starts.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if ((this.#starts[middle] as number) <= id) low = middle + 1;
      else high = middle - 1;
    }
    return high;
  }

  has(id: number): boolean {
    const index = this.#rangeBefore(id);
    return index >= 0 && id <= (this.#ends[index] as number);
  }

  add(id: number): void {
    const last = this.#ends.length - 1;
    // The common case: the next consecutive id.
    if (last >= 0 && this.#ends[last] === id - 1) {
      this.#ends[last] = id;
      return;
    }
    this.#addRange(id, id);
  }

  /** Adds `start..end`, merging every range it overlaps or touches. */
  #addRange(start: number, end: number): void {
    // Ranges [first, after) overlap or touch start..end.
    let first = this.#rangeBefore(start);
    if (first < 0 || (this.#ends[first] as number) < start - 1) first += 1;
    let after = first;
    while (after < this.#starts.length && (this.#starts[after] as number) <= end + 1) after += 1;
    const merges = after > first;
    const mergedStart = merges ? Math.min(start, this.#starts[first] as number) : start;
    const mergedEnd = merges ? Math.max(end, this.#ends[after - 1] as number) : end;
    this.#starts.splice(first, after - first, mergedStart);
    this.#ends.splice(first, after - first, mergedEnd);
  }

  /** Declares every id from 0 to `floor` stored; a negative floor does nothing. */
  raiseFloor(floor: number): void {
    if (floor < 0 || (this.#starts[0] === 0 && (this.#ends[0] as number) >= floor)) return;
    this.#addRange(0, floor);
  }

  /** The set as ranges, for the log's base record. */
  ranges(): IdRanges {
    return this.#starts.map((start, index) => [start, this.#ends[index] as number] as const);
  }
}

// Jain's fairness index, the one definition tests and benchmarks share.

/**
 * Jain's fairness index (Σx)² / (n·Σx²): 1 when every share is equal, 1/n when one takes all.
 * `NaN` for no shares or when every share is zero (fairness is undefined when nothing was
 * served); a negative or non-number share is a `RangeError`.
 */
export function jainIndex(shares: readonly number[]): number {
  let sum = 0;
  let squares = 0;
  for (const share of shares) {
    if (!(share >= 0)) throw new RangeError(`Expected shares to be >= 0, got ${share}`);
    sum += share;
    squares += share * share;
  }
  if (shares.length === 0 || squares === 0) return Number.NaN;
  return (sum * sum) / (shares.length * squares);
}

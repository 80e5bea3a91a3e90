// The longest request duration among requests that ended recently: a sliding-window maximum
// (a deque of durations, each larger than every later one), O(1) amortised per request.

/** Longest duration among those recorded in the last `horizonMs`. */
export class RecentDurations {
  readonly #horizonMs: number;
  // Parallel queues from `#head`: end times ascending, durations strictly descending.
  #endedAt: number[] = [];
  #durations: number[] = [];
  #head = 0;

  constructor(horizonMs: number) {
    this.#horizonMs = horizonMs;
  }

  /** A request that took `durationMs` ended at `endedAt` (never earlier than the last one). */
  record(endedAt: number, durationMs: number): void {
    // An older, shorter duration can never be the maximum again: a longer one ended after it.
    while (
      this.#durations.length > this.#head &&
      (this.#durations[this.#durations.length - 1] as number) <= durationMs
    ) {
      this.#durations.pop();
      this.#endedAt.pop();
    }
    this.#endedAt.push(endedAt);
    this.#durations.push(durationMs);
  }

  /** The longest duration recorded after `now - horizonMs`; 0 when none was. */
  max(now: number): number {
    const horizon = now - this.#horizonMs;
    while (this.#head < this.#endedAt.length && (this.#endedAt[this.#head] as number) < horizon) {
      this.#head++;
    }
    if (this.#head > 64 && this.#head * 2 > this.#endedAt.length) {
      this.#endedAt = this.#endedAt.slice(this.#head);
      this.#durations = this.#durations.slice(this.#head);
      this.#head = 0;
    }
    return this.#head < this.#durations.length ? (this.#durations[this.#head] as number) : 0;
  }
}

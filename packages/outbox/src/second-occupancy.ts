// Which of one outbox's requests of a global budget may still share a Telegram second with a
// request that starts now: each one from its start until a second after its answer.

/**
 * A request reaches Telegram somewhere between its start and its answer, so it can share a
 * Telegram second only with requests that start before its answer plus that second. This counts
 * the requests in that span, per key (a lane has one request at a time): in flight, or answered
 * less than `windowMs` ago. A budget that starts a request only while fewer than its limit are
 * counted never puts limit + 1 of its requests into one Telegram second, however long they took.
 * O(1) amortised per request.
 */
export class SecondOccupancy<K> {
  readonly #windowMs: number;
  /** Requests in flight (or slots reserved), by key, with their start. */
  readonly #inFlight = new Map<K, number>();
  // Answered requests still counted, in answer order: parallel queues from `#head`, entry `n`
  // (counted since the first answer) at index `n - #base`.
  #endedAt: number[] = [];
  #startedAt: number[] = [];
  #head = 0;
  #base = 0;
  /** Entries from `#head` whose start is below every later one's: the earliest start first. */
  #earliest: number[] = [];

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** `key`'s request starts (or its slot is reserved) at `at`; a later call moves its start. */
  started(key: K, at: number): void {
    this.#inFlight.set(key, at);
  }

  /**
   * `key`'s request was answered (or its reserved slot went unused) at `endedAt`, never earlier
   * than an earlier call's; false when `key` had none.
   */
  ended(key: K, endedAt: number): boolean {
    const startedAt = this.#inFlight.get(key);
    if (startedAt === undefined) return false;
    this.#inFlight.delete(key);
    const start = Math.min(startedAt, endedAt);
    const entry = this.#base + this.#endedAt.length;
    this.#endedAt.push(endedAt);
    this.#startedAt.push(start);
    while (
      this.#earliest.length > 0 &&
      (this.#startedAt[(this.#earliest.at(-1) as number) - this.#base] as number) >= start
    ) {
      this.#earliest.pop();
    }
    this.#earliest.push(entry);
    // What is kept is what can still be counted: at most the answers of the last window.
    this.#expire(endedAt);
    return true;
  }

  /** Requests counted at `now`. */
  count(now: number): number {
    this.#expire(now);
    return this.#inFlight.size + this.#endedAt.length - this.#head;
  }

  /**
   * When fewer than `limit` are counted, given what is known at `now`: the time enough answered
   * requests leave, `now` when fewer are counted already, `Infinity` while `limit` or more are in
   * flight (only an answer frees a place then).
   */
  roomAt(now: number, limit: number): number {
    const excess = this.count(now) - limit;
    if (excess < 0) return now;
    if (this.#inFlight.size >= limit) return Number.POSITIVE_INFINITY;
    return (this.#endedAt[this.#head + excess] as number) + this.#windowMs;
  }

  /**
   * The earliest start among the requests counted at `now` (`Infinity` when none is), and when
   * that request stops being counted: its answer plus the window, `Infinity` while in flight.
   */
  oldest(now: number): { readonly startedAt: number; readonly leavesAt: number } {
    this.#expire(now);
    let startedAt = Number.POSITIVE_INFINITY;
    let leavesAt = Number.POSITIVE_INFINITY;
    const first = this.#earliest[0];
    if (first !== undefined) {
      startedAt = this.#startedAt[first - this.#base] as number;
      leavesAt = (this.#endedAt[first - this.#base] as number) + this.#windowMs;
    }
    for (const start of this.#inFlight.values()) {
      if (start <= startedAt) {
        startedAt = start;
        leavesAt = Number.POSITIVE_INFINITY;
      }
    }
    return { startedAt, leavesAt };
  }

  #expire(now: number): void {
    const horizon = now - this.#windowMs;
    while (this.#head < this.#endedAt.length && (this.#endedAt[this.#head] as number) <= horizon) {
      this.#head++;
    }
    const firstLive = this.#base + this.#head;
    let drop = 0;
    while (drop < this.#earliest.length && (this.#earliest[drop] as number) < firstLive) drop++;
    if (drop > 0) this.#earliest.splice(0, drop);
    if (this.#head > 64 && this.#head * 2 > this.#endedAt.length) {
      this.#endedAt = this.#endedAt.slice(this.#head);
      this.#startedAt = this.#startedAt.slice(this.#head);
      this.#base += this.#head;
      this.#head = 0;
    }
  }
}

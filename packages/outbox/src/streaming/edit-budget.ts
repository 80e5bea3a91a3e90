// A stream's own budget for progress edits: a token bucket of `burst` requests that refills one
// every `intervalMs`, so a long stream spreads a group's 20 messages a minute evenly over its
// length instead of spending them in bursts and then showing nothing for seconds.

/** The bucket a stream's progress requests wait for (the final never does, but it counts). */
export class EditBudget {
  readonly #burst: number;
  readonly #intervalMs: number;
  #tokens: number;
  #atMs: number | undefined;

  constructor(burst: number, intervalMs: number) {
    this.#burst = burst;
    this.#intervalMs = intervalMs;
    this.#tokens = burst;
  }

  #refill(nowMs: number): void {
    if (this.#atMs !== undefined && this.#intervalMs > 0) {
      const refilled = this.#tokens + (nowMs - this.#atMs) / this.#intervalMs;
      this.#tokens = Math.min(this.#burst, refilled);
    }
    this.#atMs = nowMs;
  }

  /** A request of the stream started (a send, an edit, a delete); a send may leave a debt. */
  record(nowMs: number): void {
    this.#refill(nowMs);
    if (this.#intervalMs > 0) this.#tokens -= 1;
  }

  /** Milliseconds until a progress edit has a token; 0 when it has one now. */
  waitMs(nowMs: number): number {
    this.#refill(nowMs);
    return this.#tokens >= 1 ? 0 : (1 - this.#tokens) * this.#intervalMs;
  }
}

// A stream's own budget for progress edits: at most `burst` of its requests to the chat in any
// `burst × intervalMs`, so a long stream spreads a group's 20 messages a minute over its length
// instead of spending them in the first seconds and then showing nothing until the minute ends.

/** The sliding window a stream's progress edits wait for (sends and finals never do). */
export class EditBudget {
  readonly #burst: number;
  readonly #windowMs: number;
  readonly #starts: number[] = [];

  constructor(burst: number, intervalMs: number) {
    this.#burst = burst;
    this.#windowMs = burst * intervalMs;
  }

  /** A request of the stream started (a send, an edit, a delete). */
  record(nowMs: number): void {
    this.#starts.push(nowMs);
    if (this.#starts.length > this.#burst) this.#starts.shift();
  }

  /** Milliseconds until a progress edit fits the window; 0 when it does now. */
  waitMs(nowMs: number): number {
    if (this.#starts.length < this.#burst) return 0;
    return Math.max(0, (this.#starts[0] as number) + this.#windowMs - nowMs);
  }
}

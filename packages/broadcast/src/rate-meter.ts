// The pace a broadcast keeps: recipients settled per second over the last few seconds, counted in
// one-second buckets so memory stays fixed however fast it goes.

/** Seconds the rate is averaged over. */
const WINDOW_S = 10;

/** Settled recipients per second, over the last {@link WINDOW_S} seconds. */
export class RateMeter {
  readonly #buckets: number[] = new Array<number>(WINDOW_S).fill(0);
  /** The second each bucket holds (to tell a stale bucket from a current one). */
  readonly #seconds: number[] = new Array<number>(WINDOW_S).fill(Number.NEGATIVE_INFINITY);
  readonly #since: number;

  /** `nowMs`: when the broadcast (re)started, so its first seconds are not averaged over ten. */
  constructor(nowMs: number) {
    this.#since = nowMs;
  }

  record(nowMs: number): void {
    const second = Math.floor(nowMs / 1000);
    const slot = ((second % WINDOW_S) + WINDOW_S) % WINDOW_S;
    if (this.#seconds[slot] !== second) {
      this.#seconds[slot] = second;
      this.#buckets[slot] = 0;
    }
    this.#buckets[slot] = (this.#buckets[slot] ?? 0) + 1;
  }

  /** Recipients per second at `nowMs`. */
  perSecond(nowMs: number): number {
    const second = Math.floor(nowMs / 1000);
    let total = 0;
    for (let slot = 0; slot < WINDOW_S; slot++) {
      const at = this.#seconds[slot] ?? Number.NEGATIVE_INFINITY;
      if (at > second - WINDOW_S && at <= second) total += this.#buckets[slot] ?? 0;
    }
    const spanS = Math.min(WINDOW_S, Math.max((nowMs - this.#since) / 1000, 1));
    return total / spanS;
  }
}

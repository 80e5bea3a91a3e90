// Peak heap during a measured section: sampled on a short interval, relative to a baseline taken
// after a full collection (when the process runs with --expose-gc).

/** What a {@link HeapSampler} saw. */
export interface HeapReading {
  /** Heap in use at the start, after a collection when possible (bytes). */
  readonly baselineBytes: number;
  /** Highest heap in use seen minus the baseline (bytes, >= 0). */
  readonly peakAboveBaselineBytes: number;
  /** Whether the baseline followed a forced collection (`--expose-gc`). */
  readonly isCollected: boolean;
}

/** Runs a full collection when the process exposes `gc`; returns whether it could. */
export function collectGarbage(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== "function") return false;
  gc();
  return true;
}

/** Samples `heapUsed` every `intervalMs` until stopped. */
export class HeapSampler {
  readonly #baseline: number;
  readonly #isCollected: boolean;
  #peak: number;
  readonly #timer: NodeJS.Timeout;

  /**
   * @param isCollectedFirst - whether to run a full collection for the baseline (when the
   *   process exposes `gc`). A forced collection also lets V8 drop the hidden classes of objects
   *   nobody holds any more, so code that relied on them is recompiled in the next run.
   */
  constructor(intervalMs = 5, isCollectedFirst = true) {
    this.#isCollected = isCollectedFirst && collectGarbage();
    this.#baseline = process.memoryUsage().heapUsed;
    this.#peak = this.#baseline;
    this.#timer = setInterval(() => this.sample(), intervalMs);
  }

  /** Takes a sample now (also call it at points where the heap is known to be high). */
  sample(): void {
    const used = process.memoryUsage().heapUsed;
    if (used > this.#peak) this.#peak = used;
  }

  /** Stops sampling and reports. */
  stop(): HeapReading {
    this.sample();
    clearInterval(this.#timer);
    return {
      baselineBytes: this.#baseline,
      peakAboveBaselineBytes: Math.max(0, this.#peak - this.#baseline),
      isCollected: this.#isCollected,
    };
  }
}

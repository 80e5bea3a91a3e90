// Wall time per scenario of an area, kept in its results, so where the area's minutes go can
// be read from a run instead of guessed.

/** Times each scenario of a run, in the order they ran. */
export class ScenarioClock {
  readonly #durationsMs: Record<string, number> = {};

  /** Runs `scenario` and adds its wall time to `name`'s. */
  async time<T>(name: string, scenario: () => Promise<T>): Promise<T> {
    const startedAt = performance.now();
    try {
      return await scenario();
    } finally {
      this.#durationsMs[name] = (this.#durationsMs[name] ?? 0) + performance.now() - startedAt;
    }
  }

  /** Each scenario's wall time so far, ms. */
  durationsMs(): Readonly<Record<string, number>> {
    return Object.freeze({ ...this.#durationsMs });
  }
}

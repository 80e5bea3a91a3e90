// Waiting on state that real I/O reaches (a socket answered, a child process wrote): polls in real
// time. Never for a scheduling assertion; those drive a ManualClock.

/** Options of {@link eventually}. */
export interface EventuallyOptions {
  /** Give up after this long, in ms of real time. @defaultValue 10000 */
  readonly timeoutMs?: number;
  /** Poll this often, in ms. @defaultValue 5 */
  readonly intervalMs?: number;
}

/**
 * Resolves once `check` returns (or resolves to) anything but `false` without throwing. On
 * timeout it rejects with the last error `check` threw, or with an error naming `what`.
 *
 * @example
 * await eventually("the reply arrived", () => sim.transcript(chat).events.length > 0);
 * await eventually("three sends", () => expect(sends).toHaveLength(3));
 */
export async function eventually(
  what: string,
  check: () => unknown,
  options: EventuallyOptions = {},
): Promise<void> {
  const { timeoutMs = 10_000, intervalMs = 5 } = options;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let failure: unknown;
    try {
      if ((await check()) !== false) return;
    } catch (error) {
      failure = error;
    }
    if (performance.now() > deadline) {
      throw failure ?? new Error(`Timed out after ${timeoutMs} ms waiting until ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

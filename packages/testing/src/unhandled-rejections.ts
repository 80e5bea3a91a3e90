// Unhandled rejections seen while a test body runs: a fire-and-forget call, or a logger that
// rejects, must never leave one behind.

/** Options of {@link unhandledRejectionsOf}. */
export interface UnhandledRejectionsOptions {
  /** Real time to wait after `body` for stray rejections, in ms. @defaultValue 20 */
  readonly settleMs?: number;
}

/**
 * Runs `body`, waits `settleMs` of real time for stray rejections, and returns them (in order).
 *
 * @example
 * expect(await unhandledRejectionsOf(() => client.sendMessage(1, "x"))).toEqual([]);
 */
export async function unhandledRejectionsOf(
  body: () => Promise<void> | void,
  options: UnhandledRejectionsOptions = {},
): Promise<unknown[]> {
  const { settleMs = 20 } = options;
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  process.on("unhandledRejection", onRejection);
  try {
    await body();
    await new Promise((resolve) => setTimeout(resolve, settleMs));
  } finally {
    process.off("unhandledRejection", onRejection);
  }
  return rejections;
}

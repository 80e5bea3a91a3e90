// Unhandled rejections seen while a test body runs: a fire-and-forget call must never make one.

/** Runs `body`, then waits a little real time for stray rejections, and returns them. */
export async function unhandledRejectionsOf(body: () => Promise<void> | void): Promise<unknown[]> {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  process.on("unhandledRejection", onRejection);
  try {
    await body();
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    process.off("unhandledRejection", onRejection);
  }
  return rejections;
}

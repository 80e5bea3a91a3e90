// The round trip a bot process sees: `getMe` timed through the process's own Bot API client, so
// the figure includes loopback, the sim's added latency and the process's event loop, as its sends
// do.

/** Times `getMe` `calls` times, one after another, and returns the median in ms. */
export async function timeRoundTrip(getMe: () => Promise<unknown>, calls = 5): Promise<number> {
  const times: number[] = [];
  for (let call = 0; call < calls; call++) {
    const startedAt = performance.now();
    await getMe();
    times.push(performance.now() - startedAt);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor((times.length - 1) / 2)] as number;
}

// grammY's transformer-throttler as its README installs it, with every millisecond of its
// documented defaults divided by a time scale: the peer for runs against a time-scaled sim.

import { apiThrottler } from "@grammyjs/transformer-throttler";

/** The throttler's documented defaults, `scale` times faster (Bottleneck's heartbeat too). */
export function scaledThrottler(scale: number): ReturnType<typeof apiThrottler> {
  // Bottleneck refreshes reservoirs on its heartbeat (250 ms by default), so it scales too.
  const heartbeatInterval = 250 / scale;
  return apiThrottler({
    global: {
      reservoir: 30,
      reservoirRefreshAmount: 30,
      reservoirRefreshInterval: 1000 / scale,
      heartbeatInterval,
    },
    group: {
      maxConcurrent: 1,
      minTime: 1000 / scale,
      reservoir: 20,
      reservoirRefreshAmount: 20,
      reservoirRefreshInterval: 60_000 / scale,
      heartbeatInterval,
    },
    out: { maxConcurrent: 1, minTime: 1000 / scale },
  });
}

// The shared update queue's backlog (`@telepace/redis`'s RedisUpdateQueue, shared by every process
// of a bot): read from Redis at each collection.

import type { Meter, ObservableResult } from "@opentelemetry/api";

/**
 * What the metrics read of the shared update queue: `RedisUpdateQueue.unfinished()`, so the
 * queue fits without this package depending on `@telepace/redis`.
 */
export interface SharedQueueSource {
  unfinished(): Promise<number>;
}

/** Registers the queue's gauge; returns the function that stops it. */
export function instrumentSharedQueue(meter: Meter, queue: SharedQueueSource): () => void {
  const unfinished = meter.createObservableGauge("telepace.shared_queue.unfinished", {
    description:
      "Updates stored in the shared queue and not completed yet, waiting or in processing on any worker",
    unit: "{update}",
  });
  const callback = async (result: ObservableResult): Promise<void> => {
    // One read of Redis per collection; while Redis cannot answer the series has a gap, which
    // says so more plainly than a stale value would.
    const count = await queue.unfinished().catch(() => undefined);
    if (count !== undefined) result.observe(count);
  };
  unfinished.addCallback(callback);
  return () => unfinished.removeCallback(callback);
}

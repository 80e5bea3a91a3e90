// A shared update worker's metrics (`@telepace/redis`'s SharedUpdateWorker, one of several
// processes of a bot): updates in processing and its counters, all read from its snapshot.

import type { BatchObservableResult, Meter, Observable } from "@opentelemetry/api";

/**
 * What the metrics read of a shared update worker: the part of `SharedUpdateWorker.snapshot()`
 * they use, so a `SharedUpdateWorker` fits without this package depending on `@telepace/redis`.
 */
export interface SharedWorkerSource {
  snapshot(): {
    readonly processing: number;
    readonly claimed: number;
    readonly completed: number;
    readonly failed: number;
    readonly timedOut: number;
    readonly leasesLost: number;
    readonly handedOver: number;
    readonly queueFailures: number;
  };
}

type Counted = Exclude<keyof ReturnType<SharedWorkerSource["snapshot"]>, "processing">;

const COUNTERS: readonly (readonly [Counted, string, string, string])[] = [
  [
    "claimed",
    "telepace.shared_worker.updates.claimed",
    "{update}",
    "Updates taken from the shared queue",
  ],
  [
    "completed",
    "telepace.shared_worker.updates.completed",
    "{update}",
    "Updates marked done in the shared queue (failed and timed-out ones included)",
  ],
  [
    "failed",
    "telepace.shared_worker.updates.failed",
    "{update}",
    "Processors that threw or rejected",
  ],
  [
    "timedOut",
    "telepace.shared_worker.updates.timed_out",
    "{update}",
    "Processors aborted at timeoutMs",
  ],
  [
    "handedOver",
    "telepace.shared_worker.updates.handed_over",
    "{update}",
    "Updates another worker had started (after its crash or lost lease)",
  ],
  [
    "leasesLost",
    "telepace.shared_worker.leases.lost",
    "{update}",
    "Claims whose lease ran out before they completed (they run again elsewhere)",
  ],
  [
    "queueFailures",
    "telepace.shared_worker.queue.failures",
    "{call}",
    "Calls to the shared queue that failed (Redis unreachable), retried",
  ],
];

/** Registers the worker's instruments; returns the function that stops them. */
export function instrumentSharedWorker(meter: Meter, worker: SharedWorkerSource): () => void {
  const processing = meter.createObservableGauge("telepace.shared_worker.processing", {
    description: "Updates this worker is processing now",
    unit: "{update}",
  });
  const counters = COUNTERS.map(
    ([field, name, unit, description]) =>
      [field, meter.createObservableCounter(name, { description, unit })] as const,
  );
  const observables: Observable[] = [processing, ...counters.map(([, counter]) => counter)];
  const callback = (result: BatchObservableResult): void => {
    const snapshot = worker.snapshot();
    result.observe(processing, snapshot.processing);
    for (const [field, counter] of counters) result.observe(counter, snapshot[field]);
  };
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}

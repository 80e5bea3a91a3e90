// The dispatcher's metrics: queue depth and principals read from its snapshot (a standalone
// dispatcher's, or the one inside an intake), in-flight updates, outcomes, durations, waits and
// refusals from its diagnostics events.

import type { BatchObservableResult, Meter, ObservableResult } from "@opentelemetry/api";
import type { KeyKind, UpdateDispatchEvent } from "@telepace/update-dispatch";
import { metricAttributes } from "./attributes.js";
import { dispatchChannelNames, subscribeEvents } from "./channels.js";
import { histogramBuckets, seconds } from "./histogram-buckets.js";

/**
 * What the metrics read of a dispatcher: the part of `UpdateDispatcher.snapshot()` they use, so
 * an `UpdateDispatcher` fits without this package depending on it.
 */
export interface UpdateDispatcherSource {
  snapshot(): DispatcherSnapshotView;
}

/** The fields of `@telepace/update-dispatch`'s `UpdateDispatchSnapshot` the metrics read. */
export interface DispatcherSnapshotView {
  /** Queued updates by principal kind. */
  readonly queuedByKind: Readonly<Record<string, number>>;
  readonly activePrincipals: number;
  readonly waiting: number;
  readonly abandoned: number;
}

/** Registers the dispatcher's instruments over `snapshots` (summed); returns their stop. */
export function instrumentDispatch(
  meter: Meter,
  snapshots: readonly (() => DispatcherSnapshotView)[],
): () => void {
  const stopObserving = observeSnapshots(meter, snapshots);
  const stopListening = listenToEvents(meter);
  return () => {
    stopObserving();
    stopListening();
  };
}

function observeSnapshots(
  meter: Meter,
  snapshots: readonly (() => DispatcherSnapshotView)[],
): () => void {
  const depth = meter.createObservableGauge("telepace.dispatch.queue.depth", {
    description: "Accepted updates not started yet, by principal kind",
    unit: "{update}",
  });
  const principals = meter.createObservableGauge("telepace.dispatch.active_principals", {
    description: "Principals with updates queued or running",
    unit: "{principal}",
  });
  const waiting = meter.createObservableGauge("telepace.dispatch.waiting_enqueues", {
    description: "enqueue calls waiting for capacity",
    unit: "{call}",
  });
  const abandoned = meter.createObservableGauge("telepace.dispatch.abandoned", {
    description: "Processors given up on (timed out or interrupted) that have not settled",
    unit: "{update}",
  });
  const observables = [depth, principals, waiting, abandoned];
  const callback = (result: BatchObservableResult): void => {
    const queued = new Map<string, number>();
    let active = 0;
    let waits = 0;
    let stuck = 0;
    for (const take of snapshots) {
      const snapshot = take();
      for (const [kind, count] of Object.entries(snapshot.queuedByKind)) {
        queued.set(kind, (queued.get(kind) ?? 0) + count);
      }
      active += snapshot.activePrincipals;
      waits += snapshot.waiting;
      stuck += snapshot.abandoned;
    }
    for (const [kind, count] of queued) {
      result.observe(depth, count, { [metricAttributes.keyKind]: kind });
    }
    result.observe(principals, active);
    result.observe(waiting, waits);
    result.observe(abandoned, stuck);
  };
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}

function listenToEvents(meter: Meter): () => void {
  const inFlight = meter.createObservableGauge("telepace.dispatch.in_flight", {
    description: "Processors running, by principal kind",
    unit: "{update}",
  });
  const updates = meter.createCounter("telepace.dispatch.updates", {
    description: "Processor calls that ended, by principal kind and outcome",
    unit: "{update}",
  });
  const duration = meter.createHistogram("telepace.dispatch.duration", {
    description: "Processor call durations, by principal kind and outcome",
    unit: "s",
    advice: { explicitBucketBoundaries: [...histogramBuckets.duration] },
  });
  const wait = meter.createHistogram("telepace.dispatch.wait", {
    description: "Time from enqueue to the processor call, by principal kind",
    unit: "s",
    advice: { explicitBucketBoundaries: [...histogramBuckets.wait] },
  });
  const rejected = meter.createCounter("telepace.dispatch.rejected", {
    description: "Updates the dispatcher refused, by reason",
    unit: "{update}",
  });
  // Started minus finished per kind; a processor that started before the listener did is never
  // counted, so its end is clamped away rather than going negative.
  const running = new Map<KeyKind, number>();
  const observe = (result: ObservableResult): void => {
    for (const [kind, count] of running) {
      result.observe(count, { [metricAttributes.keyKind]: kind });
    }
  };
  inFlight.addCallback(observe);
  const unsubscribe = subscribeEvents<UpdateDispatchEvent>(dispatchChannelNames, {
    started: (event) => {
      running.set(event.keyKind, (running.get(event.keyKind) ?? 0) + 1);
      wait.record(seconds(event.waitedMs), { [metricAttributes.keyKind]: event.keyKind });
    },
    finished: (event) => {
      running.set(event.keyKind, Math.max(0, (running.get(event.keyKind) ?? 0) - 1));
      const attributes = {
        [metricAttributes.keyKind]: event.keyKind,
        [metricAttributes.outcome]: event.outcome,
      };
      updates.add(1, attributes);
      duration.record(seconds(event.durationMs), attributes);
    },
    rejected: (event) => rejected.add(1, { [metricAttributes.reason]: event.reason }),
  });
  return () => {
    unsubscribe();
    inFlight.removeCallback(observe);
  };
}

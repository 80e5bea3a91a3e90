// The intake's metrics: offset lag and unfinished updates read from its snapshot, its polling and
// journal counters, a journal outage, and getUpdates durations from its diagnostics events.

import type { BatchObservableResult, Meter } from "@opentelemetry/api";
import type { UpdateIntakeEvent } from "@telepace/update-dispatch";
import { intakeChannelNames, subscribeEvents } from "./channels.js";
import type { DispatcherSnapshotView } from "./dispatch-metrics.js";
import { histogramBuckets, seconds } from "./histogram-buckets.js";

/**
 * What the metrics read of an intake: the part of `UpdateIntake.snapshot()` they use, so an
 * `UpdateIntake` fits without this package depending on it.
 */
export interface UpdateIntakeSource {
  snapshot(): {
    readonly offsetLag: number;
    readonly unfinished: number;
    readonly polls: number;
    readonly fetched: number;
    readonly appended: number;
    readonly duplicates: number;
    readonly rateLimited: number;
    readonly backoffs: number;
    /** Read when present (an intake of update-dispatch 0.3 or later). */
    readonly idRestarts?: number;
    readonly journalFailures?: number;
    readonly journalOutageMs?: number;
    readonly dispatcher: DispatcherSnapshotView;
  };
}

/** Registers the intake's instruments; returns the function that stops them all. */
export function instrumentIntake(meter: Meter, intake: UpdateIntakeSource): () => void {
  const offsetLag = meter.createObservableGauge("telepace.intake.offset.lag", {
    description:
      "How far the confirmed offset runs ahead of the oldest unfinished update, in update ids",
    unit: "{update}",
  });
  const unfinished = meter.createObservableGauge("telepace.intake.unfinished", {
    description: "Stored updates whose processing has not ended",
    unit: "{update}",
  });
  const polls = meter.createObservableCounter("telepace.intake.polls", {
    description: "getUpdates calls",
    unit: "{call}",
  });
  const fetched = meter.createObservableCounter("telepace.intake.updates.fetched", {
    description: "Updates getUpdates returned",
    unit: "{update}",
  });
  const stored = meter.createObservableCounter("telepace.intake.updates.stored", {
    description: "Updates the journal stored as new (polls and webhook)",
    unit: "{update}",
  });
  const duplicates = meter.createObservableCounter("telepace.intake.updates.duplicates", {
    description: "Updates seen before, not dispatched again",
    unit: "{update}",
  });
  const rateLimited = meter.createObservableCounter("telepace.intake.rate_limited", {
    description: "429 answers to getUpdates",
    unit: "{response}",
  });
  const backoffs = meter.createObservableCounter("telepace.intake.backoffs", {
    description: "Waits before polling again (429s, transient failures, failed appends)",
    unit: "{wait}",
  });
  const idRestarts = meter.createObservableCounter("telepace.intake.id_restarts", {
    description: "Times the update ids restarted lower and the journal forgot the old ones",
    unit: "{restart}",
  });
  const journalFailures = meter.createObservableCounter("telepace.intake.journal.failures", {
    description: "Journal calls that failed (appends, finishes, restarts of ids, reads at start)",
    unit: "{call}",
  });
  const journalOutage = meter.createObservableGauge("telepace.intake.journal.outage", {
    description: "How long the journal has been failing now; 0 while it works",
    unit: "s",
  });
  const observables = [
    offsetLag,
    unfinished,
    polls,
    fetched,
    stored,
    duplicates,
    rateLimited,
    backoffs,
    idRestarts,
    journalFailures,
    journalOutage,
  ];
  const callback = (result: BatchObservableResult): void => {
    const snapshot = intake.snapshot();
    result.observe(offsetLag, snapshot.offsetLag);
    result.observe(unfinished, snapshot.unfinished);
    result.observe(polls, snapshot.polls);
    result.observe(fetched, snapshot.fetched);
    result.observe(stored, snapshot.appended);
    result.observe(duplicates, snapshot.duplicates);
    result.observe(rateLimited, snapshot.rateLimited);
    result.observe(backoffs, snapshot.backoffs);
    if (snapshot.idRestarts !== undefined) result.observe(idRestarts, snapshot.idRestarts);
    if (snapshot.journalFailures !== undefined) {
      result.observe(journalFailures, snapshot.journalFailures);
    }
    if (snapshot.journalOutageMs !== undefined) {
      result.observe(journalOutage, seconds(snapshot.journalOutageMs));
    }
  };
  meter.addBatchObservableCallback(callback, observables);

  const pollDuration = meter.createHistogram("telepace.intake.poll.duration", {
    description: "getUpdates calls that returned, long polls included",
    unit: "s",
    advice: { explicitBucketBoundaries: [...histogramBuckets.poll] },
  });
  const unsubscribe = subscribeEvents<UpdateIntakeEvent>(intakeChannelNames, {
    "intake-polled": (event) => pollDuration.record(seconds(event.durationMs)),
  });
  return () => {
    unsubscribe();
    meter.removeBatchObservableCallback(callback, observables);
  };
}

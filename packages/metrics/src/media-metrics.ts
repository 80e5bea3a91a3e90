// The media scheduler's metrics: bytes in flight, queued and allowed per (data centre, direction)
// read from the registry's snapshot, its grant counter, and permit waits and granted bytes from
// its diagnostics events.

import type { BatchObservableResult, Meter } from "@opentelemetry/api";
import type { MediaSchedulerEvent } from "@telepace/media-scheduler";
import { metricAttributes } from "./attributes.js";
import { mediaChannelNames, subscribeEvents } from "./channels.js";
import { histogramBuckets, seconds } from "./histogram-buckets.js";

/**
 * What the metrics read of a media registry: the part of `MediaSchedulerRegistry.snapshot()` they
 * use, so a `MediaSchedulerRegistry` fits without this package depending on it.
 */
export interface MediaRegistrySource {
  snapshot(): {
    readonly openTransfers: number;
    readonly counters: { readonly grants: number };
    readonly schedulers: readonly {
      readonly dc: number | string;
      readonly direction: string;
      readonly activeBytes: number;
      readonly queuedBytes: number;
      readonly maxBytesInFlight: number;
      readonly activeTransfers: number;
      readonly queuedRequests: number;
    }[];
  };
}

/** Registers the registry's instruments; returns the function that stops them all. */
export function instrumentMedia(meter: Meter, registry: MediaRegistrySource): () => void {
  const inFlight = meter.createObservableGauge("telepace.media.bytes.in_flight", {
    description: "Bytes charged to live permits, by data centre and direction",
    unit: "By",
  });
  const queued = meter.createObservableGauge("telepace.media.bytes.queued", {
    description: "Bytes of waiting acquires, by data centre and direction",
    unit: "By",
  });
  const limit = meter.createObservableGauge("telepace.media.bytes.limit", {
    description: "The byte budget (maxBytesInFlight), by data centre and direction",
    unit: "By",
  });
  const activeTransfers = meter.createObservableGauge("telepace.media.transfers.active", {
    description: "Transfers holding a live permit, by data centre and direction",
    unit: "{transfer}",
  });
  const queuedRequests = meter.createObservableGauge("telepace.media.requests.queued", {
    description: "Acquires waiting, by data centre and direction",
    unit: "{request}",
  });
  const openTransfers = meter.createObservableGauge("telepace.media.transfers.open", {
    description: "Transfers open in the registry",
    unit: "{transfer}",
  });
  const grants = meter.createObservableCounter("telepace.media.grants", {
    description: "Permits granted",
    unit: "{permit}",
  });
  const observables = [
    inFlight,
    queued,
    limit,
    activeTransfers,
    queuedRequests,
    openTransfers,
    grants,
  ];
  const callback = (result: BatchObservableResult): void => {
    const snapshot = registry.snapshot();
    for (const scheduler of snapshot.schedulers) {
      const attributes = {
        [metricAttributes.dc]: String(scheduler.dc),
        [metricAttributes.direction]: scheduler.direction,
      };
      result.observe(inFlight, scheduler.activeBytes, attributes);
      result.observe(queued, scheduler.queuedBytes, attributes);
      result.observe(limit, scheduler.maxBytesInFlight, attributes);
      result.observe(activeTransfers, scheduler.activeTransfers, attributes);
      result.observe(queuedRequests, scheduler.queuedRequests, attributes);
    }
    result.observe(openTransfers, snapshot.openTransfers);
    result.observe(grants, snapshot.counters.grants);
  };
  meter.addBatchObservableCallback(callback, observables);

  const permitWait = meter.createHistogram("telepace.media.permit.wait", {
    description: "Time from acquire to grant, by direction and priority",
    unit: "s",
    advice: { explicitBucketBoundaries: [...histogramBuckets.wait] },
  });
  const grantedBytes = meter.createCounter("telepace.media.bytes.granted", {
    description: "Bytes charged by granted permits, by direction",
    unit: "By",
  });
  const unsubscribe = subscribeEvents<MediaSchedulerEvent>(mediaChannelNames, {
    grant: (event) => {
      const direction = { [metricAttributes.direction]: event.direction };
      permitWait.record(seconds(event.waitedMs), {
        ...direction,
        [metricAttributes.priority]: event.priority,
      });
      grantedBytes.add(event.chargedBytes, direction);
    },
  });
  return () => {
    unsubscribe();
    meter.removeBatchObservableCallback(callback, observables);
  };
}

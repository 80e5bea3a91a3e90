// Broadcasts' metrics (`@telepace/broadcast`'s BroadcastRegistry): per broadcast, what is left,
// the pace and the ETA, and the sends queued and in flight, read from the registry's snapshot;
// recipients by outcome, resends after a crash and paid refusals counted from its events.

import type { BatchObservableResult, Meter, Observable } from "@opentelemetry/api";
import type { BroadcastEvent } from "@telepace/broadcast";
import { metricAttributes } from "./attributes.js";
import { broadcastChannelNames, subscribeEvents } from "./channels.js";

/**
 * What the metrics read of a broadcast registry: the part of `BroadcastRegistry.snapshot()` they
 * use, so a `BroadcastRegistry` fits without this package depending on `@telepace/broadcast`.
 */
export interface BroadcastRegistrySource {
  snapshot(): {
    readonly broadcasts: readonly {
      readonly id: string;
      readonly mode: string;
      readonly remaining: number | undefined;
      readonly queued: number;
      readonly inFlight: number;
      readonly ratePerSecond: number;
      readonly etaMs: number | undefined;
    }[];
  };
}

/** Registers the broadcasts' instruments; returns the function that stops them. */
export function instrumentBroadcasts(meter: Meter, registry: BroadcastRegistrySource): () => void {
  const gauge = (name: string, unit: string, description: string) =>
    meter.createObservableGauge(name, { unit, description });
  const remaining = gauge(
    "telepace.broadcast.remaining",
    "{recipient}",
    "Recipients of a running broadcast without an outcome yet (once their number is known)",
  );
  const rate = gauge(
    "telepace.broadcast.rate",
    "{recipient}/s",
    "Recipients this process settled per second, over the last 10 s",
  );
  const eta = gauge("telepace.broadcast.eta", "s", "Time left at the current rate");
  const queued = gauge("telepace.broadcast.sends.queued", "{send}", "Sends waiting in the outbox");
  const inFlight = gauge(
    "telepace.broadcast.sends.in_flight",
    "{send}",
    "Sends whose request started and was not answered yet",
  );
  const observables: Observable[] = [remaining, rate, eta, queued, inFlight];
  const callback = (result: BatchObservableResult): void => {
    for (const broadcast of registry.snapshot().broadcasts) {
      const attributes = {
        [metricAttributes.broadcastId]: broadcast.id,
        [metricAttributes.broadcastMode]: broadcast.mode,
      };
      if (broadcast.remaining !== undefined) {
        result.observe(remaining, broadcast.remaining, attributes);
      }
      result.observe(rate, broadcast.ratePerSecond, attributes);
      if (broadcast.etaMs !== undefined) result.observe(eta, broadcast.etaMs / 1000, attributes);
      result.observe(queued, broadcast.queued, attributes);
      result.observe(inFlight, broadcast.inFlight, attributes);
    }
  };
  meter.addBatchObservableCallback(callback, observables);

  const recipients = meter.createCounter("telepace.broadcast.recipients", {
    unit: "{recipient}",
    description: "Recipients given an outcome by this process, by outcome",
  });
  const resent = meter.createCounter("telepace.broadcast.resent", {
    unit: "{recipient}",
    description: "Sends in flight when a process died that were sent again (maybe delivered twice)",
  });
  const refused = meter.createCounter("telepace.broadcast.paid_refusals", {
    unit: "{refusal}",
    description: "Broadcasts whose paid sends Telegram refused (they went on at the free pace)",
  });
  const unsubscribe = subscribeEvents<BroadcastEvent>(broadcastChannelNames, {
    settled: (event) => {
      const id = { [metricAttributes.broadcastId]: event.id };
      recipients.add(1, { ...id, [metricAttributes.outcome]: event.outcome });
      if (event.resent) resent.add(1, id);
    },
    "paid-refused": (event) => refused.add(1, { [metricAttributes.broadcastId]: event.id }),
  });
  return () => {
    unsubscribe();
    meter.removeBatchObservableCallback(callback, observables);
  };
}

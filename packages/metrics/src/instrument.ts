// instrumentTelepace: one call that records every given component's snapshot and diagnostics
// events to an OpenTelemetry Meter, and one handle that stops all of it.

import { instrumentBroadcasts } from "./broadcast-metrics.js";
import { type DispatcherSnapshotView, instrumentDispatch } from "./dispatch-metrics.js";
import { instrumentIntake } from "./intake-metrics.js";
import { instrumentMedia } from "./media-metrics.js";
import { resolveMetricsOptions, type TelepaceMetricsOptions } from "./options.js";
import { instrumentOutbox } from "./outbox-metrics.js";
import { instrumentSharedQueue } from "./shared-queue-metrics.js";
import { instrumentSharedWorker } from "./shared-worker-metrics.js";

/** What {@link instrumentTelepace} returns: `stop()` (or `using`) ends every recording. */
export interface TelepaceInstrumentation extends Disposable {
  /**
   * Unsubscribes from every diagnostics channel and removes every observable callback, so no
   * snapshot is read and no instrument changes afterwards. Idempotent.
   */
  stop(): void;
}

/**
 * Records telepace's gauges (read from each component's `snapshot()`, and the shared queue's
 * `unfinished()`, when the SDK collects) and its counters and histograms (from the components'
 * `node:diagnostics_channel` events) on the `meter` you pass. Call it once per meter; a second
 * call creates the same instruments again and counts every event twice.
 *
 * @throws {TypeError | RangeError} when an option is unknown or invalid, naming it.
 * @example
 * const metrics = instrumentTelepace({
 *   meter: meterProvider.getMeter("my-bot"),
 *   outbox: client.outbox,
 *   intake,
 *   mediaRegistry,
 * });
 * // … on shutdown:
 * metrics.stop();
 */
export function instrumentTelepace(options: TelepaceMetricsOptions): TelepaceInstrumentation {
  const resolved = resolveMetricsOptions(options);
  const {
    meter,
    outbox,
    intake,
    dispatcher,
    mediaRegistry,
    sharedWorker,
    sharedQueue,
    broadcasts,
  } = resolved;
  const stops: (() => void)[] = [];
  try {
    if (outbox !== undefined) stops.push(instrumentOutbox({ ...resolved, outbox }));
    if (intake !== undefined) stops.push(instrumentIntake(meter, intake));
    const dispatchers: (() => DispatcherSnapshotView)[] = [];
    if (dispatcher !== undefined) dispatchers.push(() => dispatcher.snapshot());
    if (intake !== undefined) dispatchers.push(() => intake.snapshot().dispatcher);
    if (dispatchers.length > 0) stops.push(instrumentDispatch(meter, dispatchers));
    if (mediaRegistry !== undefined) stops.push(instrumentMedia(meter, mediaRegistry));
    if (sharedWorker !== undefined) stops.push(instrumentSharedWorker(meter, sharedWorker));
    if (sharedQueue !== undefined) stops.push(instrumentSharedQueue(meter, sharedQueue));
    if (broadcasts !== undefined) stops.push(instrumentBroadcasts(meter, broadcasts));
  } catch (error) {
    for (const stop of stops) stop();
    throw error;
  }
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    for (const each of stops.splice(0)) each();
  };
  return { stop, [Symbol.dispose]: stop };
}

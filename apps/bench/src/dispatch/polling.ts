// End-to-end long polling against the simulator: a backlog drained through real getUpdates
// offsets over a slow link, and a hot principal sending faster than it can be served while
// everybody else keeps writing.

import { type Summary, summarize } from "../stats.js";
import type { PollerContender } from "./pollers.js";
import { ReplayRecorder } from "./replay.js";
import { openSimLink, sendArrivals, simIndexOf } from "./sim-link.js";
import { slotCeilingPerSecond } from "./slot-ceiling.js";
import { HOT_PRINCIPAL, type UpdateStream } from "./workload.js";

/** How a polling run is driven. */
export interface PollingRunOptions {
  /** Added to every Bot API call by the simulator, ms. */
  readonly latencyMs: number;
  /** The run gives up this long after it started (updates not finished by then are late), ms. */
  readonly deadlineMs: number;
  /**
   * Whether the run ends once every update of principals other than the hot one finished (the
   * hot principal's own backlog is then left behind). @defaultValue false: every update
   */
  readonly isHotLeftBehind?: boolean;
}

/** What one contender measured in one polling run. */
export interface PollingRun {
  readonly contender: string;
  readonly settings: Readonly<Record<string, number | string | boolean>>;
  readonly isConfirmedAfterStore: boolean;
  /** The median of getMe calls timed before the run, ms: the round trip it ran at. */
  readonly measuredRoundTripMs: number;
  readonly updates: number;
  /** Updates the run waited for (all, or all but the hot principal's). */
  readonly awaited: number;
  readonly finished: number;
  /** Awaited updates not finished by the deadline. */
  readonly late: number;
  readonly makespanMs: number;
  /** Finished updates per second of makespan. */
  readonly updatesPerSecond: number;
  /**
   * The most any dispatcher with the contender's slots could have drained, given how long each
   * finished update held its slot in this run (see {@link slotCeilingPerSecond}), updates/s.
   */
  readonly slotCeilingPerSecond: number;
  /** Processor start − send, of principals other than the hot one, ms. */
  readonly othersQueueingMs: Summary;
  /** The same for the hot principal (empty without one). */
  readonly hotQueueingMs: Summary;
  /** Updates the simulator handed out per update of the stream (1 = each fetched once). */
  readonly fetchesPerUpdate: number;
  readonly getUpdatesCalls: number;
  readonly rejected: number;
  readonly peakHeld: number;
  readonly outOfOrderStarts: number;
  readonly overlappingStarts: number;
  readonly duplicateStarts: number;
}

/**
 * Plays `stream` through a fresh simulator into `contender`. A stream whose updates all arrive at
 * 0 is sent before polling starts (a backlog); otherwise it is sent at its arrival times.
 */
export async function runPolling(
  stream: UpdateStream,
  contender: PollerContender,
  options: PollingRunOptions,
): Promise<PollingRun> {
  const link = await openSimLink(stream, options.latencyMs);
  try {
    const isBacklog = stream.arrivalMs.every((arrival) => arrival === 0);
    const sentAtMs = new Float64Array(stream.updates.length);
    const played: UpdateStream = { ...stream, arrivalMs: sentAtMs };
    const isHot = (index: number): boolean => stream.principalOf[index] === HOT_PRINCIPAL;
    const awaits = options.isHotLeftBehind === true ? (index: number) => !isHot(index) : () => true;
    if (isBacklog) for (let index = 0; index < stream.updates.length; index++) link.send(index);
    const measuredRoundTripMs = await link.measureRoundTripMs();
    const before = link.sim.counters();
    const startedAt = performance.now();
    const recorder = new ReplayRecorder(played, startedAt, { indexOf: simIndexOf, awaits });
    const poller = await contender.start(link, recorder.process);
    const sending = new AbortController();
    const sent = isBacklog
      ? Promise.resolve()
      : sendArrivals(link, stream, startedAt, sentAtMs, sending.signal);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, options.deadlineMs);
    });
    await Promise.race([recorder.done, deadline]);
    clearTimeout(timer);
    sending.abort();
    await sent;
    const trace = recorder.trace();
    const report = await poller.stop();
    const after = link.sim.counters();
    const others: number[] = [];
    const hot: number[] = [];
    let awaited = 0;
    let late = 0;
    trace.queueingMs.forEach((queueing, index) => {
      if (awaits(index)) {
        awaited++;
        if (Number.isNaN(queueing)) late++;
      }
      if (!Number.isNaN(queueing)) (isHot(index) ? hot : others).push(queueing);
    });
    return {
      contender: contender.name,
      settings: contender.settings,
      isConfirmedAfterStore: contender.isConfirmedAfterStore,
      measuredRoundTripMs,
      updates: stream.updates.length,
      awaited,
      finished: trace.finished,
      late,
      makespanMs: trace.makespanMs,
      updatesPerSecond: (trace.finished * 1000) / trace.makespanMs,
      slotCeilingPerSecond: slotCeilingPerSecond(
        trace.heldMs,
        stream.principalOf,
        stream.options.principals,
        contender.slots,
      ),
      othersQueueingMs: summarize(others),
      hotQueueingMs: summarize(hot),
      fetchesPerUpdate: (after.updatesDelivered - before.updatesDelivered) / stream.updates.length,
      getUpdatesCalls: (after.calls.getUpdates ?? 0) - (before.calls.getUpdates ?? 0),
      rejected: report.rejected,
      peakHeld: report.peakHeld,
      outOfOrderStarts: trace.outOfOrderStarts,
      overlappingStarts: trace.overlappingStarts,
      duplicateStarts: trace.duplicateStarts,
    };
  } finally {
    await link.close();
  }
}

// The figures one simulated run yields, per scenario: completion times by file kind, throughput
// against the link, the round trip the run actually had; Jain's index for equal files.

import { jainIndex } from "@telepace/testing";
import { type Summary, summarize } from "../stats.js";
import type { LinkModel } from "./link.js";
import type { GateRun } from "./simulate.js";

/** Figures of one gate in a mixed scenario. */
export interface MixedFigures {
  readonly gate: string;
  readonly settings: GateRun["settings"];
  readonly smallCompletionMs: Summary;
  readonly largeCompletionMs: Summary;
  readonly makespanMs: number;
  /** Bytes ÷ makespan ÷ the link's bandwidth. */
  readonly throughputVsLink: number;
  readonly peakBytesInFlight: number;
  /** Mean send → first byte of requests on an open connection, ms: the round trip as run. */
  readonly firstByteMs: number;
  readonly requests: number;
  /** Requests that opened (or reopened) a connection first. */
  readonly handshakes: number;
}

/** Figures of one gate in the equal-files scenario. */
export interface FairnessFigures {
  readonly gate: string;
  /** Jain's index over the bytes each file had received when the first file finished. */
  readonly jain: number;
  readonly bytesAtFirstFinish: readonly number[];
  readonly completionMs: Summary;
  readonly throughputVsLink: number;
}

function throughputVsLink(run: GateRun, link: LinkModel): number {
  return (run.bytes * 1000) / run.makespanMs / link.bytesPerSecond;
}

export function mixedFigures(run: GateRun, link: LinkModel): MixedFigures {
  const durations = (kind: "small" | "large"): number[] =>
    run.files.filter((file) => file.kind === kind).map((file) => file.durationMs);
  const counters = run.link;
  return {
    gate: run.gate,
    settings: run.settings,
    smallCompletionMs: summarize(durations("small")),
    largeCompletionMs: summarize(durations("large")),
    makespanMs: run.makespanMs,
    throughputVsLink: throughputVsLink(run, link),
    peakBytesInFlight: run.peakBytesInFlight,
    firstByteMs:
      counters.firstByteCount === 0
        ? Number.NaN
        : counters.firstByteMsSum / counters.firstByteCount,
    requests: counters.requests,
    handshakes: counters.handshakes,
  };
}

export function fairnessFigures(run: GateRun, link: LinkModel): FairnessFigures {
  return {
    gate: run.gate,
    jain: jainIndex(run.bytesAtFirstFinish),
    bytesAtFirstFinish: run.bytesAtFirstFinish,
    completionMs: summarize(run.files.map((file) => file.durationMs)),
    throughputVsLink: throughputVsLink(run, link),
  };
}

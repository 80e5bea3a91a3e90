// Figures of a write run, from what the sim recorded (timed transcripts, counters) and what the
// workload issued: latency, staleness, order violations, lost and late messages.

import type { SimCounters, TranscriptEvent } from "@telepace/bot-api-sim";
import { percentile } from "../stats.js";
import { progressStep, type ReplayLog, sequenceOf } from "./workloads.js";
import type { SendRecord } from "./writers.js";

/** A percentile that may only be known as a lower bound (messages still undelivered). */
export interface Bounded {
  readonly value: number;
  /** True when the value is a lower bound: the percentile fell on an undelivered message. */
  readonly isLowerBound: boolean;
}

/** Latency figures over the messages users wait for. */
export interface LatencyFigures {
  readonly count: number;
  readonly delivered: number;
  readonly p50: Bounded;
  readonly p99: Bounded;
  readonly max: Bounded;
}

/** Everything measured in one run of one contender on one workload. */
export interface RunFigures {
  readonly apiCalls: number;
  readonly callsByMethod: Readonly<Record<string, number>>;
  readonly tooManyRequests: number;
  /** Final messages, replies and broadcast messages: issue → stored by the sim, Telegram ms. */
  readonly messageLatencyMs: LatencyFigures;
  /** How long the visible progress text had been out of date, sampled, Telegram ms. */
  readonly stalenessMs: { readonly samples: number; readonly p50: number; readonly p99: number };
  /** Sends overtaking an earlier send of the chat, or edits showing an older step than before. */
  readonly orderViolations: number;
  /** Messages that appear more than once. */
  readonly duplicates: number;
  /** Messages that never arrived although the client reported a plain failure (or nothing). */
  readonly lost: number;
  /** Messages that never arrived, whatever the client reported (lost + late + maybe-delivered ones). */
  readonly missing: number;
  /** Messages still on their way when the run's deadline passed. */
  readonly lateAtDeadline: number;
  /** Messages never sent: their handler had stopped at an earlier send that threw. */
  readonly notSent: number;
  /** Failed sends the client reported as possibly delivered. */
  readonly maybeDelivered: number;
  /** … of which never arrived. */
  readonly maybeDeliveredMissing: number;
}

function boundedPercentile(
  delivered: readonly number[],
  undeliveredBounds: readonly number[],
  p: number,
): Bounded {
  const values = [...delivered.map((value) => ({ value, isLowerBound: false }))].sort(
    (a, b) => a.value - b.value,
  );
  // An undelivered message took at least its bound; it ranks after every delivered one.
  const bounds = [...undeliveredBounds]
    .sort((a, b) => a - b)
    .map((value) => ({ value, isLowerBound: true }));
  const all = [...values, ...bounds];
  if (all.length === 0) return { value: Number.NaN, isLowerBound: false };
  const rank = Math.max(1, Math.ceil((p / 100) * all.length));
  return all[rank - 1] as Bounded;
}

/** Computes a run's figures. `endedAt` is the real time the run stopped waiting. */
export function analyse(
  log: ReplayLog,
  transcripts: ReadonlyMap<number, readonly TranscriptEvent[]>,
  counters: SimCounters,
  scale: number,
  endedAt: number,
  sampleEveryTelegramMs = 50,
): RunFigures {
  const botEvents = (chatId: number): readonly TranscriptEvent[] =>
    (transcripts.get(chatId) ?? []).filter((event) => event.actor === "bot");

  // Where and when each message arrived, by chat and text.
  const arrivals = new Map<string, TranscriptEvent>();
  let orderViolations = 0;
  let duplicates = 0;
  for (const chatId of transcripts.keys()) {
    let highestSeq = -1;
    const seenSeqs = new Set<number>();
    const lastStep = new Map<number, number>();
    for (const event of botEvents(chatId)) {
      if (event.kind === "send") {
        const seq = sequenceOf(event.text);
        if (seq === undefined) continue;
        if (seenSeqs.has(seq)) duplicates++;
        else if (seq < highestSeq) orderViolations++;
        seenSeqs.add(seq);
        highestSeq = Math.max(highestSeq, seq);
        const key = `${chatId}\u0000${event.text}`;
        if (!arrivals.has(key)) arrivals.set(key, event);
        const step = progressStep(event.text);
        if (step !== undefined && event.messageId !== undefined)
          lastStep.set(event.messageId, step);
      } else if (event.kind === "edit" && event.messageId !== undefined) {
        const step = progressStep(event.text);
        if (step === undefined) continue;
        const previous = lastStep.get(event.messageId);
        if (previous !== undefined && step < previous) orderViolations++;
        lastStep.set(event.messageId, Math.max(step, previous ?? step));
      }
    }
  }
  const arrivalOf = (record: SendRecord): TranscriptEvent | undefined =>
    arrivals.get(`${record.chatId}\u0000${record.text}`);

  let lost = 0;
  let late = 0;
  let missing = 0;
  let maybeDelivered = 0;
  let maybeDeliveredMissing = 0;
  let notSent = 0;
  const latencies: number[] = [];
  const bounds: number[] = [];
  for (const record of log.records) {
    if (record.status === "skipped") {
      notSent++;
      missing++;
      continue;
    }
    if (record.maybeDelivered) maybeDelivered++;
    const arrival = arrivalOf(record);
    if (arrival === undefined) {
      missing++;
      if (record.maybeDelivered) maybeDeliveredMissing++;
      else if (record.status === "failed") lost++;
      else late++;
    }
    if (record.kind === "progress") continue;
    if (arrival !== undefined) latencies.push((arrival.atMs - record.issuedAt) * scale);
    else bounds.push((endedAt - record.issuedAt) * scale);
  }

  // Staleness: at each sample, how long the text on screen had been superseded by a newer state.
  const staleness: number[] = [];
  const stepRealMs = sampleEveryTelegramMs / scale;
  for (const trace of log.streams) {
    const shown: { atMs: number; step: number }[] = [];
    const messageId = trace.progress.messageId;
    if (messageId !== undefined) {
      for (const event of botEvents(trace.chatId)) {
        if (event.messageId !== messageId || (event.kind !== "send" && event.kind !== "edit")) {
          continue;
        }
        const step = progressStep(event.text);
        if (step !== undefined) shown.push({ atMs: event.atMs, step });
      }
    }
    const produced = trace.producedAt;
    let shownIndex = -1;
    let visible = -1;
    let latest = 0;
    for (let t = produced[0] as number; t < trace.final.issuedAt; t += stepRealMs) {
      while (shownIndex + 1 < shown.length && (shown[shownIndex + 1]?.atMs as number) <= t) {
        shownIndex++;
        visible = Math.max(visible, shown[shownIndex]?.step as number);
      }
      while (latest + 1 < produced.length && (produced[latest + 1] as number) <= t) latest++;
      staleness.push(visible >= latest ? 0 : (t - (produced[visible + 1] as number)) * scale);
    }
  }
  staleness.sort((a, b) => a - b);

  return {
    apiCalls: Object.values(counters.calls).reduce((sum, calls) => sum + calls, 0),
    callsByMethod: counters.calls,
    tooManyRequests: counters.tooManyRequests,
    messageLatencyMs: {
      count: latencies.length + bounds.length,
      delivered: latencies.length,
      p50: boundedPercentile(latencies, bounds, 50),
      p99: boundedPercentile(latencies, bounds, 99),
      max: boundedPercentile(latencies, bounds, 100),
    },
    stalenessMs: {
      samples: staleness.length,
      p50: percentile(staleness, 50),
      p99: percentile(staleness, 99),
    },
    orderViolations,
    duplicates,
    lost,
    missing,
    lateAtDeadline: late,
    notSent,
    maybeDelivered,
    maybeDeliveredMissing,
  };
}

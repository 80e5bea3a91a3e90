// The outbox's metrics: queue depth, in-flight requests and freezes read from its snapshot at each
// collection (by chat kind, the busiest chats one by one on request), op counters from its
// snapshot's counters, and 429s and queue waits from its diagnostics events.

import type { Attributes, BatchObservableResult, Meter, Observable } from "@opentelemetry/api";
import type { Clock } from "@telepace/core";
import type { OutboxEvent } from "@telepace/outbox";
import { type ChatKind, chatKindOf, metricAttributes } from "./attributes.js";
import { outboxChannelNames, subscribeEvents } from "./channels.js";
import { histogramBuckets, seconds } from "./histogram-buckets.js";
import { OutboxWaits } from "./outbox-waits.js";

/**
 * What the metrics read of an outbox: the part of `TelegramOutbox.snapshot()` they use, so a
 * `TelegramOutbox` (or a `TelegramClient`'s `outbox`) fits without this package depending on it.
 */
export interface OutboxSource {
  snapshot(): OutboxSnapshotView;
}

/** The fields of `@telepace/outbox`'s `OutboxSnapshot` the metrics read. */
export interface OutboxSnapshotView {
  readonly chats: readonly {
    readonly chat: string | undefined;
    readonly pending: number;
    readonly inFlight: boolean;
    readonly frozenForMs: number;
  }[];
  readonly globalFrozenForMs: number;
  readonly counters: {
    readonly enqueued: number;
    readonly coalesced: number;
    readonly superseded: number;
    readonly executed: number;
    readonly delivered: number;
    readonly notModified: number;
    readonly retries: number;
    readonly failed: number;
    readonly closed: number;
    readonly rejected: number;
    readonly aborted: number;
  };
}

/** What {@link instrumentOutbox} needs. */
export interface OutboxMetricsConfig {
  readonly meter: Meter;
  readonly outbox: OutboxSource;
  readonly clock: Clock;
  readonly maxPerChatSeries: number;
  readonly maxTrackedWaits: number;
}

/** An outbox event as this package reads it: an older outbox's `started` has no `waitedMs`. */
type OutboxStartedView =
  | Exclude<OutboxEvent, { type: "started" }>
  | (Omit<Extract<OutboxEvent, { type: "started" }>, "waitedMs"> & {
      readonly waitedMs?: number | undefined;
    });

const CHAT_KINDS: readonly ChatKind[] = ["private", "group", "supergroup", "none"];
/** The `telepace.chat.id` of every chat not reported on its own. */
const OTHER_CHATS = "other";

/** Registers the outbox's instruments; returns the function that stops them all. */
export function instrumentOutbox(config: OutboxMetricsConfig): () => void {
  const stopObserving = observeSnapshots(config);
  const stopListening = listenToEvents(config);
  return () => {
    stopObserving();
    stopListening();
  };
}

function observeSnapshots({ meter, outbox, maxPerChatSeries }: OutboxMetricsConfig): () => void {
  const depth = meter.createObservableGauge("telepace.outbox.queue.depth", {
    description: "Ops waiting in the outbox, by chat kind (and chat, for the busiest chats)",
    unit: "{op}",
  });
  const inFlight = meter.createObservableGauge("telepace.outbox.in_flight", {
    description: "Requests in flight, by chat kind",
    unit: "{request}",
  });
  const frozen = meter.createObservableGauge("telepace.outbox.frozen_chats", {
    description: "Chats with waiting work frozen by a 429, by chat kind",
    unit: "{chat}",
  });
  const globalFreeze = meter.createObservableGauge("telepace.outbox.global_freeze.remaining", {
    description: "Time every chat stays frozen by a chat-less 429 (0: not frozen)",
    unit: "s",
  });
  const enqueued = meter.createObservableCounter("telepace.outbox.ops.enqueued", {
    description: "Ops accepted, coalesced ones included",
    unit: "{op}",
  });
  const coalesced = meter.createObservableCounter("telepace.outbox.ops.coalesced", {
    description: "Ops that replaced a waiting op with the same key",
    unit: "{op}",
  });
  const settled = meter.createObservableCounter("telepace.outbox.ops.settled", {
    description: "Ops settled, by outcome",
    unit: "{op}",
  });
  const requests = meter.createObservableCounter("telepace.outbox.requests", {
    description: "Requests started, every attempt counted",
    unit: "{request}",
  });
  const retries = meter.createObservableCounter("telepace.outbox.retries", {
    description: "Attempts requeued after a 429 or a transient failure",
    unit: "{attempt}",
  });
  const observables = [
    depth,
    inFlight,
    frozen,
    globalFreeze,
    enqueued,
    coalesced,
    settled,
    requests,
    retries,
  ];
  const callback = (result: BatchObservableResult): void => {
    const snapshot = outbox.snapshot();
    const byKind = perKind(snapshot);
    for (const kind of CHAT_KINDS) {
      const figures = byKind.get(kind) as KindFigures;
      const attributes = { [metricAttributes.chatKind]: kind };
      result.observe(inFlight, figures.inFlight, attributes);
      result.observe(frozen, figures.frozen, attributes);
    }
    observeDepth(result, depth, snapshot, byKind, maxPerChatSeries);
    result.observe(globalFreeze, seconds(snapshot.globalFrozenForMs));
    const { counters } = snapshot;
    result.observe(enqueued, counters.enqueued);
    result.observe(coalesced, counters.coalesced);
    result.observe(requests, counters.executed);
    result.observe(retries, counters.retries);
    const outcomes: Record<string, number> = {
      delivered: counters.delivered - counters.notModified,
      "not-modified": counters.notModified,
      superseded: counters.superseded,
      failed: counters.failed,
      closed: counters.closed,
      rejected: counters.rejected,
      aborted: counters.aborted,
    };
    for (const [outcome, count] of Object.entries(outcomes)) {
      result.observe(settled, count, { [metricAttributes.outcome]: outcome });
    }
  };
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}

interface KindFigures {
  pending: number;
  inFlight: number;
  frozen: number;
}

function perKind(snapshot: OutboxSnapshotView): Map<ChatKind, KindFigures> {
  const byKind = new Map<ChatKind, KindFigures>();
  for (const kind of CHAT_KINDS) byKind.set(kind, { pending: 0, inFlight: 0, frozen: 0 });
  for (const chat of snapshot.chats) {
    const figures = byKind.get(chatKindOf(chat.chat)) as KindFigures;
    figures.pending += chat.pending;
    if (chat.inFlight) figures.inFlight++;
    if (chat.frozenForMs > 0) figures.frozen++;
  }
  return byKind;
}

/**
 * Queue depth by chat kind; with `maxPerChatSeries`, the busiest chats (the snapshot lists them
 * busiest first) one by one and the rest of each kind as `telepace.chat.id="other"`, so the
 * series of one kind still add up to its depth.
 */
function observeDepth(
  result: BatchObservableResult,
  depth: Observable,
  snapshot: OutboxSnapshotView,
  byKind: ReadonlyMap<ChatKind, KindFigures>,
  maxPerChatSeries: number,
): void {
  if (maxPerChatSeries === 0) {
    for (const [kind, figures] of byKind) {
      result.observe(depth, figures.pending, { [metricAttributes.chatKind]: kind });
    }
    return;
  }
  const rest = new Map<ChatKind, number>();
  for (const [kind, figures] of byKind) rest.set(kind, figures.pending);
  let reported = 0;
  for (const chat of snapshot.chats) {
    if (reported === maxPerChatSeries) break;
    if (chat.chat === undefined || chat.pending === 0) continue;
    const kind = chatKindOf(chat.chat);
    const attributes: Attributes = {
      [metricAttributes.chatKind]: kind,
      [metricAttributes.chatId]: chat.chat,
    };
    result.observe(depth, chat.pending, attributes);
    rest.set(kind, (rest.get(kind) ?? 0) - chat.pending);
    reported++;
  }
  for (const [kind, pending] of rest) {
    result.observe(depth, pending, {
      [metricAttributes.chatKind]: kind,
      [metricAttributes.chatId]: OTHER_CHATS,
    });
  }
}

function listenToEvents({ meter, clock, maxTrackedWaits }: OutboxMetricsConfig): () => void {
  const rateLimited = meter.createCounter("telepace.outbox.rate_limited", {
    description: "429 answers to outbox requests, by scope and chat kind",
    unit: "{response}",
  });
  const retryAfter = meter.createHistogram("telepace.outbox.retry_after", {
    description: "The retry_after of 429 answers, by scope",
    unit: "s",
    advice: { explicitBucketBoundaries: [...histogramBuckets.retryAfter] },
  });
  const queueWait = meter.createHistogram("telepace.outbox.queue.wait", {
    description: "Time from enqueue to an op's first attempt, by chat kind",
    unit: "s",
    advice: { explicitBucketBoundaries: [...histogramBuckets.wait] },
  });
  // Enqueue times are kept only for an outbox whose `started` events carry no `waitedMs` (before
  // @telepace/outbox 0.3): the first event that has it ends the bookkeeping for good.
  let waits: OutboxWaits | undefined = new OutboxWaits(maxTrackedWaits);
  return subscribeEvents<OutboxStartedView>(outboxChannelNames, {
    enqueued: (event) => waits?.enqueued(event.chat, event.key, event.priority, clock.now()),
    coalesced: (event) => waits?.coalesced(event.chat, event.key, event.priority),
    superseded: (event) => {
      if (event.reason === "dropped") waits?.left(event.chat, event.key);
    },
    started: (event) => {
      if (typeof event.waitedMs === "number") waits = undefined;
      if (event.attempt !== 1) return;
      let waitedMs = event.waitedMs;
      if (waitedMs === undefined) {
        const at = waits?.started(event.chat, event.key);
        if (at === undefined) return;
        waitedMs = clock.now() - at;
      }
      queueWait.record(seconds(waitedMs), {
        [metricAttributes.chatKind]: chatKindOf(event.chat),
      });
    },
    settled: (event) => {
      // A coalesced op's settlement leaves its place to the newer op; a dropped one was handled.
      if (event.attempts === 0 && event.status !== "superseded") waits?.left(event.chat, event.key);
    },
    "rate-limited": (event) => {
      const scope = { [metricAttributes.rateLimitScope]: event.scope };
      rateLimited.add(1, { ...scope, [metricAttributes.chatKind]: chatKindOf(event.chat) });
      retryAfter.record(seconds(event.retryAfterMs), scope);
    },
  });
}

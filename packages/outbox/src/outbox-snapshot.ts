// What the outbox shows of itself: monotonic counters and a frozen point-in-time snapshot of its
// lanes, pacing and freezes.

import type { Lane } from "./lane.js";

/** Monotonic counters of {@link TelegramOutbox.snapshot}. */
export interface OutboxCounters {
  /** Ops accepted (coalesced ones included). */
  readonly enqueued: number;
  /** Ops that replaced a pending op with the same key. */
  readonly coalesced: number;
  /** Ops settled as superseded (coalesced away or dropped). */
  readonly superseded: number;
  /** Requests started (every attempt counts). */
  readonly executed: number;
  /** Ops delivered (not-modified included). */
  readonly delivered: number;
  /** Ops delivered as "message is not modified". */
  readonly notModified: number;
  /** 429 answers. */
  readonly rateLimited: number;
  /** Attempts requeued after a 429 or a transient failure. */
  readonly retries: number;
  /** Ops settled as failed. */
  readonly failed: number;
  /** Ops settled as closed. */
  readonly closed: number;
  /** Ops rejected at the pending bound. */
  readonly rejected: number;
  /** Ops whose caller aborted them. */
  readonly aborted: number;
  /** Times the pacing store failed to answer (everything was held, then asked again). */
  readonly pacingStoreFailures: number;
}

/** One chat (or chat-less key) with work in the outbox. */
export interface OutboxChatSnapshot {
  /** The chat's pacing key; `undefined` for an op without a chat. */
  readonly chat: string | undefined;
  /** Ops waiting. */
  readonly pending: number;
  /** Ops waiting, by priority. */
  readonly pendingByPriority: Readonly<Record<number, number>>;
  /** Whether a request to the chat is in flight. */
  readonly inFlight: boolean;
  /** Milliseconds until the chat's next paced slot (0: now). */
  readonly nextSlotInMs: number;
  /** Milliseconds the chat stays frozen by a 429 (0: not frozen). */
  readonly frozenForMs: number;
  /** Milliseconds of transient-failure backoff left (0: none). */
  readonly backoffForMs: number;
}

/** A point-in-time view of the outbox; a fresh frozen object per call. */
export interface OutboxSnapshot {
  /** `open`, `closing` (draining) or `closed`. */
  readonly state: "open" | "closing" | "closed";
  /** Ops waiting. */
  readonly pending: number;
  /** Requests in flight. */
  readonly inFlight: number;
  /** Ops waiting, by priority. */
  readonly pendingByPriority: Readonly<Record<number, number>>;
  /** Chats with work, busiest first. */
  readonly chats: readonly OutboxChatSnapshot[];
  /** Milliseconds every chat stays frozen by a chat-less 429 (0: not frozen). */
  readonly globalFrozenForMs: number;
  /**
   * Milliseconds until a failing pacing store is asked again (0: it answers). While above 0
   * nothing starts: without pacing state nothing is sent.
   */
  readonly pacingStoreRetryInMs: number;
  readonly counters: OutboxCounters;
}

/** The counters as the outbox updates them. */
export type MutableCounters = { -readonly [K in keyof OutboxCounters]: number };

/** Every counter at 0. */
export function createCounters(): MutableCounters {
  return {
    enqueued: 0,
    coalesced: 0,
    superseded: 0,
    executed: 0,
    delivered: 0,
    notModified: 0,
    rateLimited: 0,
    retries: 0,
    failed: 0,
    closed: 0,
    rejected: 0,
    aborted: 0,
    pacingStoreFailures: 0,
  };
}

/** What a snapshot is taken from. */
export interface SnapshotSource {
  readonly state: OutboxSnapshot["state"];
  readonly pending: number;
  readonly inFlight: number;
  readonly lanes: Iterable<Lane>;
  readonly globalFrozenUntil: number;
  readonly pacingStoreRetryAt: number;
  readonly counters: OutboxCounters;
}

/** A fresh frozen snapshot at `now`; remaining times are clamped at 0. */
export function takeSnapshot(source: SnapshotSource, now: number): OutboxSnapshot {
  const total: Record<number, number> = {};
  const chats: OutboxChatSnapshot[] = [];
  for (const lane of source.lanes) {
    const byPriority: Record<number, number> = {};
    for (const entry of lane.pending.values()) {
      byPriority[entry.priority] = (byPriority[entry.priority] ?? 0) + 1;
      total[entry.priority] = (total[entry.priority] ?? 0) + 1;
    }
    chats.push(
      Object.freeze({
        chat: lane.chatKey,
        pending: lane.pending.size,
        pendingByPriority: Object.freeze(byPriority),
        inFlight: lane.inFlight !== undefined,
        nextSlotInMs: Math.max(0, lane.nextAt - now),
        frozenForMs: Math.max(0, lane.frozenUntil - now),
        backoffForMs: Math.max(0, lane.backoffUntil - now),
      }),
    );
  }
  chats.sort((a, b) => b.pending - a.pending);
  return Object.freeze({
    state: source.state,
    pending: source.pending,
    inFlight: source.inFlight,
    pendingByPriority: Object.freeze(total),
    chats: Object.freeze(chats),
    globalFrozenForMs: Math.max(0, source.globalFrozenUntil - now),
    pacingStoreRetryInMs: Math.max(0, source.pacingStoreRetryAt - now),
    counters: Object.freeze({ ...source.counters }),
  });
}

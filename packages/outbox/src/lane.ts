// A lane: the pending ops of one chat (or of one chat-less key) in send order,
// (priority, queued_at), with the times the chat may next be asked for a pacing slot, and what
// an attempt's end tells the scheduler about them.

import { BinaryHeap, type Deferred } from "@telepace/core";
import { type OutboxOperation, Priority } from "./operation.js";
import type { ChatPacing } from "./outbox-options.js";
import type { OutboxOutcome } from "./outcome.js";
import type { Hold } from "./retry-policy.js";

/** Where an op stands in line: lower priority first, then earlier `queuedAt`, then `seq`. */
export interface Place {
  readonly priority: number;
  readonly queuedAt: number;
  readonly seq: number;
}

/** Send order: (priority, queued_at), with the enqueue order breaking ties. */
export const byPlace = (a: Place, b: Place): number =>
  a.priority - b.priority || a.queuedAt - b.queuedAt || a.seq - b.seq;

/** One op in the outbox, from enqueue to its outcome; a coalesced op keeps its entry. */
export interface Entry {
  readonly seq: number;
  readonly lane: Lane;
  /** The op's own key; `undefined` for unique ops. */
  readonly key: string | undefined;
  /** Who the op is within its lane: its key, or a symbol for a unique op. */
  readonly identity: string | symbol;
  readonly queuedAt: number;
  priority: number;
  op: OutboxOperation<unknown>;
  deferred: Deferred<OutboxOutcome<unknown>>;
  unsubscribe: () => void;
  attempts: number;
  state: "pending" | "in-flight" | "settled";
  controller: AbortController | undefined;
  /** When the current attempt started. */
  startedAt: number;
}

/** One chat's ops and pacing times; a lane exists only while it has work. */
export interface Lane {
  readonly id: string | symbol;
  readonly chatKey: string | undefined;
  readonly pacing: ChatPacing;
  readonly pending: BinaryHeap<Entry>;
  /** The pending entries by identity: at most one per key. */
  readonly byIdentity: Map<string | symbol, Entry>;
  inFlight: Entry | undefined;
  /** Whether an asynchronous store is answering for the lane's head. */
  acquiring: boolean;
  /** Earliest time any op of the lane may be asked for (freeze, backoff); the store decides. */
  readyAt: number;
  /** Earliest time a paced op of the lane may be asked for. */
  nextAt: number;
  /** Earliest time a paced op that leaves the send reserve may be asked for. */
  reservedUntil: number;
  frozenUntil: number;
  backoffUntil: number;
  transientFailures: number;
}

/** How an attempt of a lane ended, as the scheduler applies it to the lane. */
export interface AttemptEnd {
  readonly lane: Lane;
  /** How the retry policy holds the lane (a success ends its run of transient failures). */
  readonly hold: Hold;
  /** The clock's time when the answer came. */
  readonly endedAt: number;
  /** How long the request took (ms). */
  readonly durationMs: number;
}

/** A new lane with nothing pending and no pacing history. */
export function createLane(
  id: string | symbol,
  chatKey: string | undefined,
  pacing: ChatPacing,
): Lane {
  return {
    id,
    chatKey,
    pacing,
    pending: new BinaryHeap<Entry>(byPlace),
    byIdentity: new Map(),
    inFlight: undefined,
    acquiring: false,
    readyAt: Number.NEGATIVE_INFINITY,
    nextAt: Number.NEGATIVE_INFINITY,
    reservedUntil: Number.NEGATIVE_INFINITY,
    frozenUntil: Number.NEGATIVE_INFINITY,
    backoffUntil: Number.NEGATIVE_INFINITY,
    transientFailures: 0,
  };
}

/** A chat's lane, or for a chat-less op a lane per key: nothing to pace, but no self-overlap. */
export function laneIdOf(chatKey: string | undefined, identity: string | symbol): string | symbol {
  if (chatKey !== undefined) return `chat:${chatKey}`;
  return typeof identity === "string" ? `key:${identity}` : identity;
}

/** Places of the lane's window an op must leave free: the send reserve, for edit priority. */
export function reserveOf(lane: Lane, entry: Entry): number {
  return entry.priority >= Priority.edit ? lane.pacing.reserve : 0;
}

/** Whether the op takes a pacing slot of its chat. */
export function isPaced(entry: Entry): boolean {
  return entry.op.paced ?? true;
}

/**
 * The op the lane would start next, or `undefined` while it has none or is busy (a request in
 * flight, or a store answering).
 */
export function headOf(lane: Lane): Entry | undefined {
  return lane.inFlight !== undefined || lane.acquiring ? undefined : lane.pending.peek();
}

/** The earliest time the lane's pacing store may be asked for `head`. */
export function askableAt(lane: Lane, head: Entry): number {
  const paced = isPaced(head);
  return Math.max(
    lane.readyAt,
    paced ? lane.nextAt : lane.readyAt,
    paced && reserveOf(lane, head) > 0 ? lane.reservedUntil : lane.readyAt,
  );
}

// When each lane may start: the lane queue, one question at a time to the pacing store, the
// global budgets (everything, and paid broadcasts apart) with their margin and freezes, one clock timer for the earliest moment anything can, a
// timer per slot the store reserved ahead, and the lanes it started that have not ended yet.

import { safeLog, type Timer } from "@telepace/core";
import { RetryAfterTooLongError } from "./errors.js";
import {
  type AttemptEnd,
  askableAt,
  budgetOf,
  type Entry,
  type GlobalBudget,
  headOf,
  isPaced,
  type Lane,
  reserveOf,
} from "./lane.js";
import { LaneQueue } from "./lane-queue.js";
import { GLOBAL_WINDOW_MS, type ResolvedOutboxOptions } from "./outbox-options.js";
import type { PacingDecision, PacingRequest } from "./pacing-store.js";
import { RecentDurations } from "./recent-durations.js";
import type { Hold } from "./retry-policy.js";
import { errorLabel } from "./settlement.js";

/** What the scheduler asks of the outbox it schedules for. */
export interface SchedulerHost {
  /** Whether the outbox closed: nothing starts any more. */
  isClosed(): boolean;
  /** The store granted the lane a slot: start its head; {@link Scheduler.attemptEnded} follows. */
  start(lane: Lane, now: number): void;
  /** The lane has nothing to start: forget it if it has nothing at all. */
  forget(lane: Lane): void;
  /** Fail every pending op of the lane (a chat freeze longer than `maxRetryAfterMs`). */
  failLane(lane: Lane, error: unknown): void;
  /** Fail every pending op (a global freeze longer than `maxRetryAfterMs`). */
  failAll(error: unknown): void;
  /** The pacing store failed to answer (counted in the snapshot). */
  storeFailed(): void;
}

function isPromiseLike<T>(value: unknown): value is PromiseLike<T> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as PromiseLike<T>).then === "function"
  );
}

/**
 * Starts lanes as the pacing store allows: ready lanes best op first while fewer than
 * `maxInFlight` requests run, the others when their time comes. O(log n) per placement.
 */
export class Scheduler {
  readonly #options: ResolvedOutboxOptions;
  readonly #host: SchedulerHost;
  readonly #queue = new LaneQueue<Lane>();
  readonly #durations: RecentDurations;
  /** The lanes started and not ended yet, with when each started, in start order. */
  readonly #running = new Map<Lane, number>();
  /** Whether any request has ended: until then how late requests arrive is unknown. */
  #hasDurations = false;
  #acquiring = 0;
  /** When each global budget has room again: a budget's denial holds only the ops it paces. */
  readonly #readyAt: Record<GlobalBudget, number> = {
    global: Number.NEGATIVE_INFINITY,
    "paid-broadcast": Number.NEGATIVE_INFINITY,
  };
  #globalFrozenUntil = Number.NEGATIVE_INFINITY;
  #pumpScheduled = false;
  #pumping = false;
  #timer: Timer | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  /** Store failures in a row: the hold after each one doubles, up to `retryMaxDelayMs`. */
  #storeFailures = 0;
  #storeRetryAt = Number.NEGATIVE_INFINITY;
  /** Timers of the slots the store reserved ahead, each holding its lane until its time. */
  readonly #reservations = new Set<Timer>();

  constructor(options: ResolvedOutboxOptions, host: SchedulerHost) {
    this.#options = options;
    this.#host = host;
    this.#durations = new RecentDurations(GLOBAL_WINDOW_MS + options.marginMs);
  }

  /** When the outbox asks its failing pacing store again (in the past: the store answers). */
  get storeRetryAt(): number {
    return this.#storeRetryAt;
  }

  /** When the chat-less freeze ends (in the past: not frozen). */
  get globalFrozenUntil(): number {
    return this.#globalFrozenUntil;
  }

  /** Requests in flight: lanes started and not ended yet. */
  get inFlight(): number {
    return this.#running.size;
  }

  /** The lanes with a request in flight, in the order they started. */
  inFlightLanes(): IterableIterator<Lane> {
    return this.#running.keys();
  }

  /** Puts a lane where the scheduler will look for it, or forgets it when it has no work. */
  place(lane: Lane): void {
    const head = headOf(lane);
    if (head === undefined) {
      this.#queue.remove(lane);
      this.#host.forget(lane);
      return;
    }
    const at = askableAt(lane, head);
    const moved =
      at <= this.#options.clock.now()
        ? this.#queue.markReady(lane, head, budgetOf(head))
        : this.#queue.markWaiting(lane, at, head.seq);
    if (moved) this.wake();
  }

  /** Looks for work to start, once the current microtask's enqueues are in. */
  wake(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    // A microtask, so ops enqueued together in one tick are ordered among themselves first.
    queueMicrotask(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  /**
   * The lane's request ended: its place in flight is free, its duration widens the global margin,
   * and the lane is held as the attempt decided before it is placed again.
   */
  attemptEnded({ lane, hold, endedAt, durationMs }: AttemptEnd): void {
    this.#running.delete(lane);
    this.#durations.record(endedAt, durationMs);
    if (!this.#hasDurations) {
      this.#hasDurations = true;
      // A global wait decided with the cap is asked again with what this request took.
      const floor = Math.max(this.#globalFrozenUntil, this.#storeRetryAt);
      this.#readyAt.global = floor;
      this.#readyAt["paid-broadcast"] = floor;
    }
    this.#hold(lane, hold, endedAt);
    this.place(lane);
    // A place in flight is free: other ready chats may start even if this one has nothing left.
    this.wake();
  }

  /**
   * Holds the lane as the retry policy decided: a 429 freezes its chat, or every chat when it has
   * none (here and in the pacing store); a transient failure backs the chat off.
   */
  #hold(lane: Lane, hold: Hold, now: number): void {
    switch (hold.kind) {
      case "none":
        return;
      case "reset-failures":
        lane.transientFailures = 0;
        return;
      case "backoff":
        lane.transientFailures = hold.transientFailures;
        lane.backoffUntil = now + hold.delayMs;
        lane.readyAt = Math.max(lane.readyAt, lane.backoffUntil);
        return;
      case "freeze":
        this.#freeze(lane, hold.retryAfterMs, now);
        return;
    }
  }

  /** Stops for good: no timer, nothing queued (a reserved slot goes unused: never over-granted). */
  stop(): void {
    for (const reservation of this.#reservations) reservation.cancel();
    this.#reservations.clear();
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    this.#queue.clear();
  }

  /**
   * A freeze another process recorded, as the pacing store heard it: holds the chat's lane (every
   * lane, for no chat) as a 429 of this outbox would, without telling the store again. A lane
   * waiting for its slot, reserved or asked for, finds the freeze when the answer comes. A freeze
   * longer than `maxRetryAfterMs` fails the waiting ops, as the store's denial would.
   */
  freezeHeard(chatKey: string | undefined, lane: Lane | undefined, durationMs: number): void {
    const now = this.#options.clock.now();
    this.#markFrozen(chatKey, lane, now + durationMs);
    const { maxRetryAfterMs } = this.#options;
    if (durationMs > maxRetryAfterMs) {
      const error = new RetryAfterTooLongError(durationMs, maxRetryAfterMs);
      if (lane !== undefined) this.#host.failLane(lane, error);
      else if (chatKey === undefined) this.#host.failAll(error);
    }
    if (lane !== undefined && !lane.acquiring && lane.inFlight === undefined) this.place(lane);
    this.wake();
  }

  #freeze(lane: Lane, retryAfterMs: number, now: number): void {
    this.#markFrozen(lane.chatKey, lane, now + retryAfterMs);
    try {
      const done = this.#options.store.freeze(lane.chatKey, retryAfterMs, now);
      if (isPromiseLike(done)) done.then(undefined, (error: unknown) => this.#freezeFailed(error));
    } catch (error) {
      this.#freezeFailed(error);
    }
  }

  /** Holds `lane` of `chatKey` until `until`, or everything when there is no chat. */
  #markFrozen(chatKey: string | undefined, lane: Lane | undefined, until: number): void {
    if (chatKey === undefined) {
      this.#globalFrozenUntil = Math.max(this.#globalFrozenUntil, until);
      this.#holdBudgets(until);
    } else if (lane !== undefined) {
      lane.frozenUntil = Math.max(lane.frozenUntil, until);
      lane.readyAt = Math.max(lane.readyAt, until);
    }
  }

  #freezeFailed(error: unknown): void {
    safeLog(
      this.#options.logger,
      "error",
      { error: errorLabel(error) },
      "outbox pacing store freeze failed",
    );
  }

  #pump(): void {
    if (this.#pumping || this.#host.isClosed()) return;
    const { clock, store, maxInFlight } = this.#options;
    let now = clock.now();
    for (let due = this.#queue.popDue(now); due !== undefined; due = this.#queue.popDue(now)) {
      this.place(due);
    }
    while (this.#running.size + this.#acquiring < maxInFlight) {
      const lane = this.#queue.popReady(now, this.#readyAt);
      if (lane === undefined) break;
      // Each question at the time it is asked. A stale time would spin: the store's wait, counted
      // from it, can be over by the live time `place` reads, so the lane is ready again at once
      // and gets the same answer forever.
      now = clock.now();
      const request = this.#pacingRequest(lane, now);
      let decision: PacingDecision | PromiseLike<PacingDecision>;
      try {
        decision = store.acquire(request);
      } catch (error) {
        this.#storeFailed(lane, error);
        break;
      }
      if (isPromiseLike<PacingDecision>(decision)) {
        // A shared store answers asynchronously: one question at a time, its place in flight held.
        lane.acquiring = true;
        this.#acquiring++;
        this.#pumping = true;
        const resume = () => {
          lane.acquiring = false;
          this.#acquiring--;
          this.#pumping = false;
        };
        decision.then(
          (answer) => {
            resume();
            if (!this.#host.isClosed()) this.#apply(lane, answer, request, clock.now());
            this.#pump();
          },
          (error: unknown) => {
            resume();
            this.#storeFailed(lane, error);
            this.#pump();
          },
        );
        return;
      }
      if (!this.#apply(lane, decision, request, now)) break;
    }
    this.#armTimer(now);
  }

  /**
   * The margin of the global second. A request reaches Telegram somewhere between its start and
   * its answer, so when the start `limit` places later comes a second plus that request's
   * duration after it, the two cannot meet in one Telegram second. The margin is the longest
   * duration among requests that may still be in the window (ended within it, or in flight, by
   * their age), up to `pacingMarginMs`: on a fast link the budget is spent nearly in full, a slow
   * answer widens the window at once, and past the cap the outbox is as careful as a fixed margin.
   */
  #globalMarginMs(now: number): number {
    const { marginMs, globalLimit } = this.#options;
    if (marginMs === 0 || globalLimit === 0) return 0;
    // Before any request ended the margin is the cap: a shared store counts slots in the widest
    // window any process asked with, and a cold process asking with none let another process's
    // early slots land within Telegram's second of this one's first requests.
    if (!this.#hasDurations) return marginMs;
    let longest = this.#durations.max(now);
    for (const startedAt of this.#running.values()) longest = Math.max(longest, now - startedAt);
    return Math.min(marginMs, longest);
  }

  /**
   * How far ahead the store may reserve this op's global slot: a quarter of the store's
   * `reserveAheadMs` plus how long the op has waited, up to `reserveAheadMs`. Ops that waited
   * longer reserve earlier, so among processes sharing the store the op that has waited longest
   * tends to get the next slot, as one outbox would give it. Never more than the global second
   * less the margin: then the earlier start that the reserved slot comes a window after began at
   * least `pacingMarginMs` before the question, so the margin the question carried already
   * accounts for that start (by its duration once it ended, by its age while in flight).
   */
  #maxStartInMs(head: Entry, now: number): number {
    const { store, marginMs } = this.#options;
    const aheadMs = Math.min(store.reserveAheadMs ?? 0, GLOBAL_WINDOW_MS - marginMs);
    if (!(aheadMs > 0)) return 0;
    return Math.min(aheadMs, aheadMs / 4 + Math.max(0, now - head.queuedAt));
  }

  #pacingRequest(lane: Lane, now: number): PacingRequest {
    const head = lane.pending.peek() as Entry;
    const pacing = lane.pacing;
    const maxStartInMs = this.#maxStartInMs(head, now);
    const paid = budgetOf(head) === "paid-broadcast";
    return {
      chatKey: lane.chatKey,
      intervalMs: pacing.intervalMs,
      chatLimit: pacing.windowLimit,
      chatWindowMs: pacing.windowMs,
      chatReserve: reserveOf(lane, head),
      paced: isPaced(head),
      globalLimit: paid ? this.#options.paidBroadcastLimit : this.#options.globalLimit,
      globalWindowMs: GLOBAL_WINDOW_MS + this.#globalMarginMs(now),
      nowMs: now,
      ...(maxStartInMs > 0 ? { maxStartInMs } : {}),
      ...(paid ? { paidBroadcast: true } : {}),
    };
  }

  /** Holds every global budget until `until` (a freeze of everything, a failing store). */
  #holdBudgets(until: number): void {
    this.#readyAt.global = Math.max(this.#readyAt.global, until);
    this.#readyAt["paid-broadcast"] = Math.max(this.#readyAt["paid-broadcast"], until);
  }

  /**
   * Acts on the store's answer for a lane; returns false when nothing else may start now. A
   * budget's denial holds only that budget: the other's ops may still start.
   */
  #apply(lane: Lane, decision: PacingDecision, request: PacingRequest, now: number): boolean {
    this.#storeFailures = 0;
    this.#storeRetryAt = Number.NEGATIVE_INFINITY;
    if (decision.granted) {
      const startInMs = decision.startInMs ?? 0;
      if (startInMs > 0) {
        this.#reserve(lane, request, startInMs);
        return true;
      }
      this.#startGranted(lane, request, now);
      return true;
    }
    const until = now + decision.waitMs;
    const { maxRetryAfterMs } = this.#options;
    switch (decision.reason) {
      case "chat-paced":
        lane.nextAt = until;
        this.place(lane);
        return true;
      case "chat-reserved":
        lane.reservedUntil = until;
        this.place(lane);
        return true;
      case "chat-frozen":
        lane.frozenUntil = until;
        if (decision.waitMs > maxRetryAfterMs) {
          this.#host.failLane(lane, new RetryAfterTooLongError(decision.waitMs, maxRetryAfterMs));
        } else {
          lane.readyAt = Math.max(lane.readyAt, until);
        }
        this.place(lane);
        return true;
      case "global-frozen":
        this.#globalFrozenUntil = until;
        if (decision.waitMs > maxRetryAfterMs) {
          this.#host.failAll(new RetryAfterTooLongError(decision.waitMs, maxRetryAfterMs));
        } else {
          this.#holdBudgets(until);
          this.place(lane);
        }
        return false;
      case "global-budget":
        this.#readyAt[request.paidBroadcast === true ? "paid-broadcast" : "global"] = until;
        this.place(lane);
        return true;
    }
  }

  /**
   * Starts the lane's head on a slot granted for `request`, or places the lane when it no longer
   * fits. `now` is the clock's; the op counts as started at `startAt` (at most `now`).
   */
  #startGranted(lane: Lane, request: PacingRequest, now: number, startAt = now): void {
    // A 429 heard while the store answered (or while the slot was reserved) wins: the slot goes
    // unused rather than a request going out into a freeze.
    if (lane.frozenUntil > now || this.#globalFrozenUntil > now) {
      this.place(lane);
      return;
    }
    const head = lane.pending.peek();
    // While an asynchronous store answered (or a reserved slot came), a paced op may have
    // overtaken the unpaced one the slot was asked for, an edit may have become the head of a
    // slot asked for a send, or an op of the other global budget the head of this one's slot:
    // that op must ask for its own slot.
    const fits =
      head !== undefined &&
      (request.paced || !isPaced(head)) &&
      request.chatReserve >= reserveOf(lane, head) &&
      (request.paidBroadcast === true) === (budgetOf(head) === "paid-broadcast");
    if (fits && lane.inFlight === undefined) this.#start(lane, head, startAt);
    else this.place(lane);
  }

  #start(lane: Lane, head: Entry, startAt: number): void {
    // A paced op's start is what the chat's next paced op is spaced from.
    if (isPaced(head) && lane.pacing.intervalMs > 0) lane.nextAt = startAt + lane.pacing.intervalMs;
    this.#running.set(lane, startAt);
    this.#host.start(lane, startAt);
  }

  /**
   * Holds the lane (its place in flight taken, nothing else asked for it) until the slot the
   * store reserved, then starts whatever op heads it. A slot whose op went away meanwhile, or
   * that a freeze now covers, goes unused: the store counted it, so it can only be wasted, never
   * handed out twice.
   */
  #reserve(lane: Lane, request: PacingRequest, startInMs: number): void {
    lane.acquiring = true;
    this.#acquiring++;
    // The store decided after the question was asked: its slot began no earlier than this. The
    // op counts as started from there, so the global margin covers a late timer as well.
    const slotAt = request.nowMs + startInMs;
    const timer = this.#options.clock.setTimer(() => {
      this.#reservations.delete(timer);
      lane.acquiring = false;
      this.#acquiring--;
      if (this.#host.isClosed()) return;
      const now = this.#options.clock.now();
      this.#startGranted(lane, request, now, Math.min(now, slotAt));
      this.wake();
    }, startInMs);
    this.#reservations.add(timer);
  }

  #storeFailed(lane: Lane, error: unknown): void {
    // Without pacing state nothing may be sent safely: hold everything and ask again later, a
    // little later after each failure in a row (a store that is down is not hammered).
    const { retryBaseDelayMs, retryMaxDelayMs } = this.#options;
    const base = Math.max(retryBaseDelayMs, 1);
    const retryInMs = Math.min(base * 2 ** this.#storeFailures, Math.max(retryMaxDelayMs, base));
    this.#storeFailures++;
    this.#host.storeFailed();
    safeLog(
      this.#options.logger,
      "error",
      { error: errorLabel(error), consecutiveFailures: this.#storeFailures, retryInMs },
      "outbox pacing store failed",
    );
    this.#storeRetryAt = this.#options.clock.now() + retryInMs;
    this.#holdBudgets(this.#storeRetryAt);
    this.place(lane);
  }

  #armTimer(now: number): void {
    const at = this.#queue.nextWakeUp(now, this.#readyAt);
    if (at === this.#timerAt) return;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = at;
    if (at === Number.POSITIVE_INFINITY || this.#host.isClosed()) return;
    this.#timer = this.#options.clock.setTimer(() => {
      this.#timer = undefined;
      this.#timerAt = Number.POSITIVE_INFINITY;
      this.#pump();
    }, at - now);
  }
}

// When each lane may start: the lane queue, one question at a time to the pacing store, the
// global budgets (everything, and paid broadcasts apart) with their own gate, margin and
// freezes, one clock timer for the earliest moment anything can, a timer per slot the store
// reserved ahead, and the lanes it started that have not ended yet.

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
import type { Hold } from "./retry-policy.js";
import { SecondOccupancy } from "./second-occupancy.js";
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

const BUDGETS: readonly GlobalBudget[] = ["global", "paid-broadcast"];

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
  /** The lanes started and not ended yet, with when each started, in start order. */
  readonly #running = new Map<Lane, number>();
  /** Whether any request has ended: until then how late requests arrive is unknown. */
  #hasDurations = false;
  /**
   * Per global budget, this outbox's requests that may still share a Telegram second with a
   * start now (in flight, reserved, or answered within the second): the budget's own gate.
   */
  readonly #occupancy: Record<GlobalBudget, SecondOccupancy<Lane>> = {
    global: new SecondOccupancy(GLOBAL_WINDOW_MS),
    "paid-broadcast": new SecondOccupancy(GLOBAL_WINDOW_MS),
  };
  /** Whether a budget waits for an answer of its own requests (the gate, or the store's pinned window). */
  readonly #heldForAnswer: Record<GlobalBudget, boolean> = {
    global: false,
    "paid-broadcast": false,
  };
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
   * The lane's request ended: its place in flight is free, its budget's gate counts it for one
   * second more, and the lane is held as the attempt decided before it is placed again.
   */
  attemptEnded({ lane, hold, endedAt }: AttemptEnd): void {
    this.#running.delete(lane);
    for (const budget of BUDGETS) {
      const answered = this.#occupancy[budget].ended(lane, endedAt);
      // A wait decided with the cap, or for an answer of this budget, is decided again.
      if ((answered && this.#heldForAnswer[budget]) || !this.#hasDurations) this.#release(budget);
    }
    this.#hasDurations = true;
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

  /** Lets the pump ask for `budget` again (not before a freeze or a failing store's retry). */
  #release(budget: GlobalBudget): void {
    this.#heldForAnswer[budget] = false;
    this.#readyAt[budget] = Math.max(this.#globalFrozenUntil, this.#storeRetryAt);
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
      const roomAt = this.#gateRoomAt(lane, now);
      if (roomAt === undefined) continue;
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
            if (!this.#host.isClosed()) this.#apply(lane, answer, request, clock.now(), roomAt);
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
      if (!this.#apply(lane, decision, request, now, roomAt)) break;
    }
    this.#armTimer(now);
  }

  /**
   * The budget's own gate, the proof that this outbox never puts more than a budget's `limit`
   * requests into one Telegram second. A request reaches Telegram somewhere between its start and
   * its answer. The gate counts this outbox's requests of the budget that are in flight, hold a
   * reserved slot, or were answered less than a second ago, and lets a question go to the store
   * only while fewer than `limit` are counted. Take any `limit + 1` of them and the one granted
   * last, asked at `a` and started at `s >= a`: at `a` at most `limit - 1` others were counted, so
   * one of them, `q`, granted earlier, was answered at least a second before `a`. `q` reached
   * Telegram by its answer, so by `s` minus a second, and the last one at `s` or later: they are a
   * second or more apart, and the `limit + 1` never share one Telegram second. This holds however
   * long requests take (no cap, no estimate), and a slow request holds one place, not the whole
   * budget. Returns when a place is free (the op starts no earlier); `undefined`: none is soon
   * enough, the lane is placed again and the budget waits for a place (a second after an answer,
   * or an answer while `limit` are in flight). A store that reserves ahead is asked once a place
   * frees within the furthest it may reserve, and a slot it grants before the place frees goes
   * unused (see `#apply`); any other store is asked only once a place is free now.
   */
  #gateRoomAt(lane: Lane, now: number): number | undefined {
    const head = lane.pending.peek() as Entry;
    const budget = budgetOf(head);
    const limit = this.#limitOf(budget);
    if (limit === 0) return Number.NEGATIVE_INFINITY;
    const roomAt = this.#occupancy[budget].roomAt(now, limit);
    const aheadMs = this.#reserveAheadMs();
    if (roomAt <= now + aheadMs) return roomAt;
    this.#readyAt[budget] = Math.max(this.#readyAt[budget], roomAt - aheadMs);
    // While the limit is in flight only an answer frees a place: `attemptEnded` releases it.
    this.#heldForAnswer[budget] = true;
    this.place(lane);
    return undefined;
  }

  /** A budget's limit per second; 0: no budget, and nothing is counted for it. */
  #limitOf(budget: GlobalBudget): number {
    return budget === "paid-broadcast"
      ? this.#options.paidBroadcastLimit
      : this.#options.globalLimit;
  }

  /** The furthest ahead the store is ever asked to reserve a global slot; 0: it is not. */
  #reserveAheadMs(): number {
    const { store, marginMs } = this.#options;
    const aheadMs = Math.min(store.reserveAheadMs ?? 0, GLOBAL_WINDOW_MS - marginMs);
    return Math.max(aheadMs, 0);
  }

  /**
   * The margin of the global second the store counts starts in. The gate already keeps this
   * outbox's own requests apart; the margin makes the store's window reach back to the earliest
   * start among them that may still share a Telegram second with the slot (by then more than a
   * second old), so a store shared with other processes counts it for them too. Up to
   * `pacingMarginMs`, and the whole of it before any request ended: a shared store counts slots in
   * the widest window any process asked with, and a cold process asking with none let another
   * process's early slots land within Telegram's second of this one's first requests.
   */
  #globalMarginMs(budget: GlobalBudget, now: number, maxStartInMs: number): number {
    const { marginMs } = this.#options;
    if (marginMs === 0) return 0;
    if (!this.#hasDurations) return marginMs;
    const { startedAt } = this.#occupancy[budget].oldest(now);
    return Math.min(marginMs, Math.max(0, now + maxStartInMs - GLOBAL_WINDOW_MS - startedAt));
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
    const budget = budgetOf(head);
    const paid = budget === "paid-broadcast";
    return {
      chatKey: lane.chatKey,
      intervalMs: pacing.intervalMs,
      chatLimit: pacing.windowLimit,
      chatWindowMs: pacing.windowMs,
      chatReserve: reserveOf(lane, head),
      paced: isPaced(head),
      globalLimit: paid ? this.#options.paidBroadcastLimit : this.#options.globalLimit,
      globalWindowMs: GLOBAL_WINDOW_MS + this.#globalMarginMs(budget, now, maxStartInMs),
      nowMs: now,
      ...(maxStartInMs > 0 ? { maxStartInMs } : {}),
      ...(paid ? { paidBroadcast: true } : {}),
    };
  }

  /**
   * When a store's window that denied `request` can next have room. A margin short of the cap
   * pins the window's far edge at this outbox's earliest start still counted: asked later, the
   * margin grows with the time, and nothing leaves the window until that request stops being
   * counted (a second after its answer, which `attemptEnded` reports) or the margin reaches the
   * cap. Asking before then would get the same answer, so the store's wait is not taken alone.
   */
  #windowMovesAt(budget: GlobalBudget, request: PacingRequest): number {
    const marginMs = request.globalWindowMs - GLOBAL_WINDOW_MS;
    if (!(marginMs > 0) || marginMs >= this.#options.marginMs) return Number.NEGATIVE_INFINITY;
    const { startedAt, leavesAt } = this.#occupancy[budget].oldest(request.nowMs);
    const capAt =
      startedAt + GLOBAL_WINDOW_MS + this.#options.marginMs - (request.maxStartInMs ?? 0);
    if (leavesAt === Number.POSITIVE_INFINITY) this.#heldForAnswer[budget] = true;
    return Math.min(leavesAt, capAt);
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
  #apply(
    lane: Lane,
    decision: PacingDecision,
    request: PacingRequest,
    now: number,
    roomAt: number,
  ): boolean {
    this.#storeFailures = 0;
    this.#storeRetryAt = Number.NEGATIVE_INFINITY;
    if (decision.granted) {
      const startInMs = decision.startInMs ?? 0;
      if (request.nowMs + startInMs < roomAt) {
        // A slot before the gate has room: unused, as a reserved slot whose op went away (the
        // store counted it, so it is wasted, never granted twice), and the budget asks again
        // when the place frees. Starting later than the store recorded would shift its chat
        // spacing and windows, so the slot is not held either.
        const budget = request.paidBroadcast === true ? "paid-broadcast" : "global";
        this.#readyAt[budget] = Math.max(this.#readyAt[budget], roomAt);
        this.#heldForAnswer[budget] = true;
        this.place(lane);
        return true;
      }
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
      case "global-budget": {
        const budget = request.paidBroadcast === true ? "paid-broadcast" : "global";
        this.#readyAt[budget] = Math.max(until, this.#windowMovesAt(budget, request));
        this.place(lane);
        return true;
      }
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
    const budget = budgetOf(head);
    if (this.#limitOf(budget) > 0) this.#occupancy[budget].started(lane, startAt);
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
    // The slot counts for the gate from its time, whatever starts on it.
    const budget = request.paidBroadcast === true ? "paid-broadcast" : "global";
    if (this.#limitOf(budget) > 0) this.#occupancy[budget].started(lane, slotAt);
    const timer = this.#options.clock.setTimer(() => {
      this.#reservations.delete(timer);
      lane.acquiring = false;
      this.#acquiring--;
      if (this.#host.isClosed()) return;
      const now = this.#options.clock.now();
      this.#startGranted(lane, request, now, Math.min(now, slotAt));
      // A slot nothing started on is done with; an op started on it is of its budget.
      if (!this.#running.has(lane) && this.#occupancy[budget].ended(lane, now)) {
        if (this.#heldForAnswer[budget]) this.#release(budget);
      }
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

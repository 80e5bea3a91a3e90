// The scheduler's queues of lanes: the lanes that may start now, ordered by their best op (one
// heap per global budget their head needs), and the lanes that may become ready later, ordered by
// when. Each lane has at most one live ticket.

import { BinaryHeap } from "@telepace/core";
import { byPlace, type GlobalBudget, type Place } from "./lane.js";

/** A lane ready now, placed by its head at the time the ticket was made. */
interface ReadyTicket<L> extends Place {
  readonly lane: L;
  readonly head: Place;
  readonly budget: GlobalBudget;
}

/** When each global budget has room again (in the past: now). */
export type BudgetReadyAt = Readonly<Record<GlobalBudget, number>>;

const BUDGETS: readonly GlobalBudget[] = ["global", "paid-broadcast"];

/** A lane that may become ready at `at`. */
interface WaitingTicket<L> {
  readonly lane: L;
  readonly at: number;
  readonly seq: number;
}

/**
 * Lanes in two heaps, with O(log n) placement. Moving a lane leaves its old ticket in its heap; a
 * ticket that is not its lane's live one is skipped when it surfaces, so nothing is searched.
 */
export class LaneQueue<L> {
  readonly #ready: Readonly<Record<GlobalBudget, BinaryHeap<ReadyTicket<L>>>> = {
    global: new BinaryHeap<ReadyTicket<L>>(byPlace),
    "paid-broadcast": new BinaryHeap<ReadyTicket<L>>(byPlace),
  };
  readonly #waiting = new BinaryHeap<WaitingTicket<L>>((a, b) => a.at - b.at || a.seq - b.seq);
  readonly #liveReady = new Map<L, ReadyTicket<L>>();
  readonly #liveWaiting = new Map<L, WaitingTicket<L>>();

  /**
   * The lane may start now with `head`, which needs a slot of `budget`. Returns false when its
   * live ticket already says so: a burst into one chat with an unchanged head adds no tickets.
   */
  markReady(lane: L, head: Place, budget: GlobalBudget): boolean {
    this.#liveWaiting.delete(lane);
    const live = this.#liveReady.get(lane);
    if (
      live !== undefined &&
      live.head === head &&
      live.priority === head.priority &&
      live.budget === budget
    ) {
      return false;
    }
    const { priority, queuedAt, seq } = head;
    const ticket = { lane, head, budget, priority, queuedAt, seq };
    this.#liveReady.set(lane, ticket);
    this.#ready[budget].push(ticket);
    return true;
  }

  /** The lane may become ready at `at`. Returns false when its live ticket already says so. */
  markWaiting(lane: L, at: number, seq: number): boolean {
    this.#liveReady.delete(lane);
    if (this.#liveWaiting.get(lane)?.at === at) return false;
    const ticket = { lane, at, seq };
    this.#liveWaiting.set(lane, ticket);
    this.#waiting.push(ticket);
    return true;
  }

  /** Takes the lane out of both queues. */
  remove(lane: L): void {
    this.#liveReady.delete(lane);
    this.#liveWaiting.delete(lane);
  }

  /** A lane whose waiting time has come by `now`, out of the queues; `undefined` when none is. */
  popDue(now: number): L | undefined {
    for (let top = this.#waiting.peek(); top !== undefined && top.at <= now; ) {
      this.#waiting.pop();
      if (this.#liveWaiting.get(top.lane) === top) {
        this.#liveWaiting.delete(top.lane);
        return top.lane;
      }
      top = this.#waiting.peek();
    }
    return undefined;
  }

  /**
   * The ready lane with the best head among the budgets with room at `now`, out of the queues;
   * `undefined` when none is ready.
   */
  popReady(now: number, readyAt: BudgetReadyAt): L | undefined {
    let best: ReadyTicket<L> | undefined;
    for (const budget of BUDGETS) {
      if (readyAt[budget] > now) continue;
      const top = this.#liveTop(budget);
      if (top !== undefined && (best === undefined || byPlace(top, best) < 0)) best = top;
    }
    if (best === undefined) return undefined;
    this.#ready[best.budget].pop();
    this.#liveReady.delete(best.lane);
    return best.lane;
  }

  /**
   * When the scheduler must look again: the first waiting lane's time, or when a budget that
   * holds a ready lane has room (`Infinity`: nothing to wake up for).
   */
  nextWakeUp(now: number, readyAt: BudgetReadyAt): number {
    let at = Number.POSITIVE_INFINITY;
    for (let top = this.#waiting.peek(); top !== undefined; top = this.#waiting.peek()) {
      if (this.#liveWaiting.get(top.lane) === top) {
        at = top.at;
        break;
      }
      this.#waiting.pop();
    }
    for (const budget of BUDGETS) {
      if (readyAt[budget] > now && this.#liveTop(budget) !== undefined) {
        at = Math.min(at, readyAt[budget]);
      }
    }
    return at;
  }

  /** The live ticket at the top of a budget's heap, dropping stale ones above it. */
  #liveTop(budget: GlobalBudget): ReadyTicket<L> | undefined {
    const heap = this.#ready[budget];
    for (let top = heap.peek(); top !== undefined; top = heap.peek()) {
      if (this.#liveReady.get(top.lane) === top) return top;
      heap.pop();
    }
    return undefined;
  }

  /** Empties every queue. */
  clear(): void {
    for (const budget of BUDGETS) this.#ready[budget].clear();
    this.#waiting.clear();
    this.#liveReady.clear();
    this.#liveWaiting.clear();
  }
}

// The scheduler's two queues of lanes: the lanes that may start now, ordered by their best op, and
// the lanes that may become ready later, ordered by when. Each lane has at most one live ticket.

import { BinaryHeap } from "@telepace/core";
import { byPlace, type Place } from "./lane.js";

/** A lane ready now, placed by its head at the time the ticket was made. */
interface ReadyTicket<L> extends Place {
  readonly lane: L;
  readonly head: Place;
}

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
  readonly #ready = new BinaryHeap<ReadyTicket<L>>(byPlace);
  readonly #waiting = new BinaryHeap<WaitingTicket<L>>((a, b) => a.at - b.at || a.seq - b.seq);
  readonly #liveReady = new Map<L, ReadyTicket<L>>();
  readonly #liveWaiting = new Map<L, WaitingTicket<L>>();

  /**
   * The lane may start now with `head`. Returns false when its live ticket already says so: a
   * burst into one chat with an unchanged head adds no tickets.
   */
  markReady(lane: L, head: Place): boolean {
    this.#liveWaiting.delete(lane);
    const live = this.#liveReady.get(lane);
    if (live !== undefined && live.head === head && live.priority === head.priority) return false;
    const ticket = { lane, head, priority: head.priority, queuedAt: head.queuedAt, seq: head.seq };
    this.#liveReady.set(lane, ticket);
    this.#ready.push(ticket);
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

  /** The ready lane with the best head, out of the queues; `undefined` when none is ready. */
  popReady(): L | undefined {
    for (let top = this.#ready.pop(); top !== undefined; top = this.#ready.pop()) {
      if (this.#liveReady.get(top.lane) === top) {
        this.#liveReady.delete(top.lane);
        return top.lane;
      }
    }
    return undefined;
  }

  /**
   * When the scheduler must look again: the first waiting lane's time, or `globalReadyAt` when a
   * lane is ready but the global budget holds it (`Infinity`: nothing to wake up for).
   */
  nextWakeUp(now: number, globalReadyAt: number): number {
    let at = Number.POSITIVE_INFINITY;
    for (let top = this.#waiting.peek(); top !== undefined; top = this.#waiting.peek()) {
      if (this.#liveWaiting.get(top.lane) === top) {
        at = top.at;
        break;
      }
      this.#waiting.pop();
    }
    for (let top = this.#ready.peek(); top !== undefined; top = this.#ready.peek()) {
      if (this.#liveReady.get(top.lane) === top) {
        if (globalReadyAt > now) at = Math.min(at, globalReadyAt);
        break;
      }
      this.#ready.pop();
    }
    return at;
  }

  /** Empties both queues. */
  clear(): void {
    this.#ready.clear();
    this.#waiting.clear();
    this.#liveReady.clear();
    this.#liveWaiting.clear();
  }
}

// The intake's hand-over to the dispatcher: journaled updates go in arrival order, waiting for
// capacity, never more at once than the dispatcher lets wait, so no journaled update is rejected.

import type { Update } from "@grammyjs/types";
import type { EnqueueResult } from "../dispatcher/results.js";
import type { UpdateDispatcher } from "../dispatcher/update-dispatcher.js";

const WAIT = Object.freeze({ wait: true });

/**
 * Feeds updates to a dispatcher with `enqueue(update, { wait: true })`, one call after another
 * in the order they were pushed, with at most `maxOutstanding` calls unresolved. Waiting calls of
 * one principal are accepted in call order, so per-principal order is arrival order; and with
 * `maxOutstanding` no larger than the dispatcher's `maxWaitingEnqueues`, a call is never
 * rejected `waiting-full`. Should a bound reject one anyway, it goes back to the front and is
 * offered again at the next {@link DispatchFeed.poke}; `closed` leaves it to the journal, which
 * replays it at the next start. The intake's dispatcher remembers no finished ids (the journal
 * decides what is a duplicate), so `duplicate` means the same id is queued or running already, and
 * its end is reported by the dispatcher's finished hook.
 */
export class DispatchFeed {
  readonly #dispatcher: UpdateDispatcher;
  readonly #maxOutstanding: number;
  #queue: Update[] = [];
  #head = 0;
  #outstanding = 0;
  #isStopped = false;

  /**
   * @param dispatcher - where updates go.
   * @param maxOutstanding - at most this many unresolved `enqueue` calls.
   */
  constructor(dispatcher: UpdateDispatcher, maxOutstanding: number) {
    this.#dispatcher = dispatcher;
    this.#maxOutstanding = maxOutstanding;
  }

  /** Updates pushed and not yet handed to the dispatcher. */
  get pending(): number {
    return this.#queue.length - this.#head;
  }

  /** Queues updates behind the ones pushed before. */
  push(updates: readonly Update[]): void {
    if (this.#isStopped) return;
    for (const update of updates) this.#queue.push(update);
    this.poke();
  }

  /** Hands over as many queued updates as the bound on outstanding calls allows. */
  poke(): void {
    while (!this.#isStopped && this.#outstanding < this.#maxOutstanding && this.pending > 0) {
      const update = this.#queue[this.#head] as Update;
      this.#head++;
      this.#outstanding++;
      this.#dispatcher.enqueue(update, WAIT).then((result) => this.#settled(update, result));
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Stops handing over; what was not handed over stays in the journal for the next start. */
  stop(): void {
    this.#isStopped = true;
    this.#queue = [];
    this.#head = 0;
  }

  #settled(update: Update, result: EnqueueResult): void {
    this.#outstanding--;
    if (result.status === "rejected" && result.reason !== "closed" && !this.#isStopped) {
      // Cannot happen with wait: true and maxOutstanding <= maxWaitingEnqueues. If it does, the
      // update is not lost: it goes back to the front and is offered again at the next poke (a
      // call settling, an update finishing), not at once, which could spin.
      this.#queue.splice(this.#head, 0, update);
      return;
    }
    this.poke();
  }
}

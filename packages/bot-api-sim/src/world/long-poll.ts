// getUpdates' waiting half for one bot: at most one parked request, woken by the next update or
// its timeout, and ended with 409 when another poller or a webhook takes over. Like Telegram, at
// most one 409 goes out per 3 s; later ones are held back for 3 s.

import type { Update } from "@grammyjs/types";
import { abortReason, type Clock, onAbort, type Timer } from "@telepace/core";
import { type ApiFailure, conflict } from "../wire/api-failure.js";
import type { UpdateQueue } from "./update-queue.js";

/** Telegram answers at most one 409 per this many ms and delays the others by as much. */
const CONFLICT_SPACING_MS = 3000;

/** Text of the 409 an older parked request gets when a newer one arrives. */
const CONFLICT_OTHER_POLLER =
  "terminated by other getUpdates request; make sure that only one bot instance is running";
/** Text of the 409 a parked request gets when setWebhook is called. */
export const CONFLICT_SET_WEBHOOK = "terminated by setWebhook request";

interface Parked {
  readonly offset: number;
  readonly limit: number;
  readonly signal: AbortSignal;
  readonly resolve: (updates: Update[]) => void;
  readonly reject: (reason: unknown) => void;
  timer: Timer | undefined;
  unsubscribe: () => void;
}

/** The long-poll slot and the 409 pacing of one bot. */
export class LongPoll {
  #parked: Parked | undefined;
  #wakeScheduled = false;
  #nextConflictAt = Number.NEGATIVE_INFINITY;
  readonly #clock: Clock;
  readonly #queue: UpdateQueue;
  readonly #onConflict: () => void;

  constructor(clock: Clock, queue: UpdateQueue, onConflict: () => void) {
    this.#clock = clock;
    this.#queue = queue;
    this.#onConflict = onConflict;
  }

  /** Whether a request is parked now. */
  get isParked(): boolean {
    return this.#parked !== undefined;
  }

  /**
   * Parks a request that found nothing: resolves with the updates that arrive first, or with
   * none after `timeoutMs`. A request already parked ends with 409. Aborting `signal` (the client
   * went away) removes it without confirming anything.
   */
  park(offset: number, limit: number, timeoutMs: number, signal: AbortSignal): Promise<Update[]> {
    this.abort(CONFLICT_OTHER_POLLER);
    if (signal.aborted) return Promise.reject(abortReason(signal));
    return new Promise<Update[]>((resolve, reject) => {
      const parked: Parked = {
        offset,
        limit,
        signal,
        resolve,
        reject,
        timer: undefined,
        unsubscribe: () => {},
      };
      parked.timer = this.#clock.setTimer(() => this.#answer(parked), timeoutMs);
      parked.unsubscribe = onAbort(signal, () => {
        this.#release(parked);
        reject(abortReason(signal));
      });
      this.#parked = parked;
    });
  }

  /** Called after an update was queued: the parked request answers on the next microtask. */
  notify(): void {
    if (this.#parked === undefined || this.#wakeScheduled) return;
    this.#wakeScheduled = true;
    // A microtask lets updates queued in the same synchronous step go out in one answer.
    queueMicrotask(() => {
      this.#wakeScheduled = false;
      if (this.#parked !== undefined) this.#answer(this.#parked);
    });
  }

  /** Ends the parked request, if any, with a 409 of the given text. */
  abort(text: string): void {
    const parked = this.#parked;
    if (parked === undefined) return;
    this.#release(parked);
    this.failConflict(text, parked.signal).catch(parked.reject);
  }

  /** Answers the parked request with whatever is pending (used on shutdown). */
  flush(): void {
    if (this.#parked !== undefined) this.#answer(this.#parked);
  }

  /**
   * A 409 paced like Telegram's: rejects at once when none went out in the last 3 s, else after
   * 3 s. Aborting `signal` drops a held-back 409.
   */
  failConflict(text: string, signal?: AbortSignal): Promise<never> {
    const failure = conflict(text);
    const now = this.#clock.now();
    this.#onConflict();
    if (now >= this.#nextConflictAt) {
      this.#nextConflictAt = now + CONFLICT_SPACING_MS;
      return Promise.reject(failure);
    }
    return this.#clock
      .sleep(CONFLICT_SPACING_MS, signal === undefined ? undefined : { signal })
      .then((): never => {
        throw failure as ApiFailure;
      });
  }

  #answer(parked: Parked): void {
    this.#release(parked);
    parked.resolve(this.#queue.take(parked.offset, parked.limit, this.#clock.now()));
  }

  #release(parked: Parked): void {
    parked.timer?.cancel();
    parked.unsubscribe();
    if (this.#parked === parked) this.#parked = undefined;
  }
}

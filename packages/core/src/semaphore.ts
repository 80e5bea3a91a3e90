// A weighted, strictly FIFO counting semaphore whose permits are Disposable.

import { abortReason, onAbort } from "./abort.js";
import { CoreError } from "./errors.js";
import { checkNumber } from "./validate.js";

/** A held share of a {@link Semaphore}. Releasing it twice is a no-op. */
export interface SemaphorePermit extends Disposable {
  /** How many units this permit holds. */
  readonly weight: number;
  /** Whether the units were given back. */
  readonly isReleased: boolean;
  /** Gives the units back (idempotent). */
  release(): void;
}

/** Options of {@link Semaphore.acquire}. */
export interface AcquireOptions {
  /** Aborting removes the waiter and rejects with `signal.reason`. */
  readonly signal?: AbortSignal | undefined;
}

interface Waiter {
  readonly weight: number;
  readonly resolve: (permit: SemaphorePermit) => void;
  readonly reject: (reason: unknown) => void;
  unsubscribe: () => void;
}

/**
 * A counting semaphore with weighted, strictly FIFO acquisition: a waiter is served only after
 * every earlier waiter, so a heavy request is never starved by a stream of light ones (and
 * `tryAcquire` never jumps the queue).
 *
 * @example
 * const slots = new Semaphore(4);
 * {
 *   using permit = await slots.acquire(1, { signal });
 *   await work();
 * } // released here, even on throw
 */
export class Semaphore {
  /** Total units. */
  readonly capacity: number;
  #available: number;
  readonly #waiters: Waiter[] = [];
  #closedReason: unknown;
  #isClosed = false;

  /** @param capacity - total units, an integer >= 1. */
  constructor(capacity: number) {
    this.capacity = checkNumber("capacity", capacity, { integer: true, min: 1 });
    this.#available = capacity;
  }

  /** Units not currently held. */
  get available(): number {
    return this.#available;
  }

  /** Number of queued acquirers. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** Whether {@link Semaphore.close} was called. */
  get isClosed(): boolean {
    return this.#isClosed;
  }

  /**
   * Waits for `weight` units in FIFO order.
   * @throws {RangeError} synchronously when `weight` is not an integer in 1..capacity.
   * @returns a permit; rejects with `signal.reason` on abort, or with the close reason.
   */
  acquire(weight = 1, options: AcquireOptions = {}): Promise<SemaphorePermit> {
    this.#checkWeight(weight);
    const { signal } = options;
    if (this.#isClosed) return Promise.reject(this.#closedReason);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.#waiters.length === 0 && this.#available >= weight) {
      return Promise.resolve(this.#grant(weight));
    }
    return new Promise<SemaphorePermit>((resolve, reject) => {
      const waiter: Waiter = { weight, resolve, reject, unsubscribe: () => {} };
      waiter.unsubscribe = onAbort(signal, () => {
        const index = this.#waiters.indexOf(waiter);
        if (index < 0) return;
        this.#waiters.splice(index, 1);
        reject(abortReason(signal as AbortSignal));
        // The removed waiter may have been blocking lighter ones behind it.
        this.#drain();
      });
      this.#waiters.push(waiter);
    });
  }

  /**
   * Takes `weight` units at once if they are free and nobody is waiting; otherwise `undefined`.
   * @throws {RangeError} when `weight` is not an integer in 1..capacity.
   */
  tryAcquire(weight = 1): SemaphorePermit | undefined {
    this.#checkWeight(weight);
    if (this.#isClosed || this.#waiters.length > 0 || this.#available < weight) return undefined;
    return this.#grant(weight);
  }

  /**
   * Rejects every waiter and every later `acquire` with `reason` (default a `CoreError` with code
   * `ERR_SEMAPHORE_CLOSED`). Permits already held stay valid and may still be released.
   */
  close(reason: unknown = new CoreError("ERR_SEMAPHORE_CLOSED", "Semaphore is closed")): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.#closedReason = reason;
    const waiters = this.#waiters.splice(0);
    for (const waiter of waiters) {
      waiter.unsubscribe();
      waiter.reject(reason);
    }
  }

  #checkWeight(weight: number): void {
    checkNumber("weight", weight, { integer: true, min: 1, max: this.capacity });
  }

  #grant(weight: number): SemaphorePermit {
    this.#available -= weight;
    return new Permit(weight, this.#give);
  }

  // One bound function for every permit: permits are created per acquire, on hot paths.
  readonly #give = (weight: number): void => {
    this.#available += weight;
    this.#drain();
  };

  #drain(): void {
    for (;;) {
      const head = this.#waiters[0];
      if (head === undefined || head.weight > this.#available) return;
      this.#waiters.shift();
      head.unsubscribe();
      head.resolve(this.#grant(head.weight));
    }
  }
}

/** A {@link SemaphorePermit}: a class, so a permit is one small object rather than closures. */
class Permit implements SemaphorePermit {
  readonly weight: number;
  #give: ((weight: number) => void) | undefined;

  constructor(weight: number, give: (weight: number) => void) {
    this.weight = weight;
    this.#give = give;
  }

  get isReleased(): boolean {
    return this.#give === undefined;
  }

  release(): void {
    const give = this.#give;
    if (give === undefined) return;
    this.#give = undefined;
    give(this.weight);
  }

  [Symbol.dispose](): void {
    this.release();
  }
}

// Abort signals for processor calls. Creating one costs microseconds on Node 20 (it re-prototypes
// an EventTarget), more than everything else the dispatcher does for an update, so a signal
// whose call ended unaborted with no listener left on it is handed to a later call.

import { getEventListeners } from "node:events";

/**
 * Controllers for processor calls. A controller goes back only when its signal was never aborted
 * and has no `abort` listener (a processor that left one behind gets a fresh signal next time,
 * and the listener dies with the old one), and never while its call runs, so concurrent calls
 * never share a signal.
 */
export class SignalPool {
  readonly #free: AbortController[] = [];
  readonly #capacity: number;

  /** @param capacity - controllers kept at most (the concurrency limit is enough). */
  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** A controller whose signal is not aborted and has no listener. */
  take(): AbortController {
    return this.#free.pop() ?? new AbortController();
  }

  /** Returns a controller whose call has settled; kept only when its signal is pristine. */
  give(controller: AbortController): void {
    if (this.#free.length >= this.#capacity) return;
    const { signal } = controller;
    if (signal.aborted || getEventListeners(signal, "abort").length > 0) return;
    this.#free.push(controller);
  }
}

// One abort listener per caller signal, shared by every waiting call that passed it: a poller
// that waits for a whole batch under one signal adds one listener, not one per update.

interface Subscription {
  readonly callbacks: Set<() => void>;
  readonly listener: () => void;
}

function noop(): void {}

/** Fans one `abort` listener per signal out to the callbacks subscribed to it. */
export class AbortSubscriptions {
  readonly #bySignal = new Map<AbortSignal, Subscription>();

  /**
   * Calls `callback` when `signal` aborts, unless the returned function was called first. The
   * signal's listener is removed once its last callback is unsubscribed or has run.
   */
  subscribe(signal: AbortSignal | undefined, callback: () => void): () => void {
    if (signal === undefined) return noop;
    let subscription = this.#bySignal.get(signal);
    if (subscription === undefined) {
      const callbacks = new Set<() => void>();
      const listener = (): void => {
        this.#bySignal.delete(signal);
        // A callback may unsubscribe itself or others while this runs; Set iteration allows it.
        for (const run of callbacks) run();
        callbacks.clear();
      };
      subscription = { callbacks, listener };
      this.#bySignal.set(signal, subscription);
      signal.addEventListener("abort", listener, { once: true });
    }
    const { callbacks, listener } = subscription;
    callbacks.add(callback);
    return () => {
      if (!callbacks.delete(callback) || callbacks.size > 0) return;
      signal.removeEventListener("abort", listener);
      if (this.#bySignal.get(signal)?.listener === listener) this.#bySignal.delete(signal);
    };
  }
}

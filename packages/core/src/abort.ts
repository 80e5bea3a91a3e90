// Small helpers for AbortSignal plumbing, shared so every package aborts the same way.

/**
 * The reason a signal was aborted with, or a DOMException "AbortError" when it carries none.
 */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/**
 * Subscribes `onAbort` to `signal` once and returns a function that unsubscribes it.
 * Call the returned function in `finally` so no listener outlives the wait it guards.
 * When the signal is already aborted, `onAbort` is not called: check `signal.aborted` first.
 */
export function onAbort(signal: AbortSignal | undefined, onAbort: () => void): () => void {
  if (signal === undefined) return noop;
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

function noop(): void {}

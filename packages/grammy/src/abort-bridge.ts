// grammY's Node build types (and may pass) its signals with the `abort-controller` shim; the
// outbox takes a native AbortSignal. This bridges one to the other for the length of a call.

/** A native signal that follows a foreign one, and the function that stops following it. */
export interface BridgedSignal {
  readonly signal: AbortSignal | undefined;
  dispose(): void;
}

interface SignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: "abort", listener: () => void): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

function noop(): void {}

function isSignalLike(value: unknown): value is SignalLike {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as SignalLike).addEventListener === "function" &&
    typeof (value as SignalLike).removeEventListener === "function"
  );
}

function reasonOf(signal: SignalLike): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/**
 * A native `AbortSignal` for `value`: itself when it is one, a follower when it only looks like
 * one (the `abort-controller` shim), none when there is none.
 */
export function bridgeSignal(value: unknown): BridgedSignal {
  if (value === undefined || value === null) return { signal: undefined, dispose: noop };
  if (value instanceof AbortSignal) return { signal: value, dispose: noop };
  if (!isSignalLike(value)) {
    throw new TypeError("Expected `signal` to be an AbortSignal");
  }
  const controller = new AbortController();
  if (value.aborted) {
    controller.abort(reasonOf(value));
    return { signal: controller.signal, dispose: noop };
  }
  const onAbort = (): void => controller.abort(reasonOf(value));
  value.addEventListener("abort", onAbort);
  return {
    signal: controller.signal,
    dispose: () => value.removeEventListener("abort", onAbort),
  };
}

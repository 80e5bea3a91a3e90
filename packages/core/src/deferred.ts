// A promise with its resolve and reject exposed (Promise.withResolvers, which Node 20 lacks).

/** A promise together with the functions that settle it. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T | PromiseLike<T>) => void;
  readonly reject: (reason?: unknown) => void;
}

/**
 * Creates a {@link Deferred}: `Promise.withResolvers()` for Node 20.
 *
 * @example
 * const ready = createDeferred<void>();
 * server.once("listening", () => ready.resolve());
 * await ready.promise;
 */
export function createDeferred<T>(): Deferred<T> {
  let resolve!: (value: T | PromiseLike<T>) => void;
  let reject!: (reason?: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

// The error family of @telepace/redis: one class with a stable `code` per thing a user does
// differently about it (start Redis, upgrade it, fix a script, stop using a closed object).

import { brandErrors } from "@telepace/core";

/** Stable codes of {@link RedisStoreError}. Match on these, never on `message`. */
export type RedisStoreErrorCode =
  | "ERR_REDIS_CONNECTION"
  | "ERR_REDIS_SCRIPT"
  | "ERR_REDIS_VERSION"
  | "ERR_REDIS_CLOSED";

/** Every error @telepace/redis creates. The client's error, when there was one, is the `cause`. */
export class RedisStoreError extends Error {
  /** Stable machine-readable code. */
  readonly code: RedisStoreErrorCode;

  constructor(code: RedisStoreErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RedisStoreError";
    this.code = code;
  }
}

// `instanceof` by brand: it holds for an error from another installed copy of this package.
brandErrors("@telepace/redis", { RedisStoreError });

/** The oldest Redis whose scripts we run: `TIME` in writing scripts and `ZADD … GT`-era replies. */
export const MIN_REDIS_VERSION = "6.2.0";

/**
 * A client failure as one of ours: a reply error from a script is a script error (a bug or a
 * foreign key of the wrong type); anything else means Redis could not be reached.
 */
export function toStoreError(error: unknown, what: string): RedisStoreError {
  if (error instanceof RedisStoreError) return error;
  const name = error instanceof Error ? error.name : "";
  if (name === "ReplyError") {
    return new RedisStoreError(
      "ERR_REDIS_SCRIPT",
      `Redis rejected the ${what} script; check that no other program writes under this key prefix`,
      { cause: error },
    );
  }
  return new RedisStoreError(
    "ERR_REDIS_CONNECTION",
    `Redis could not be reached for ${what}; check that it runs and the URL is right (retried with backoff)`,
    { cause: error },
  );
}

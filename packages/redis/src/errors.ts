// The error family of @telepace/redis: one class with a stable `code` per thing a user does
// differently about it (start Redis, fix the password, wait, upgrade it, fix a script, stop using
// a closed object).

import { brandErrors } from "@telepace/core";

/** Stable codes of {@link RedisStoreError}. Match on these, never on `message`. */
export type RedisStoreErrorCode =
  | "ERR_REDIS_CONNECTION"
  | "ERR_REDIS_AUTH"
  | "ERR_REDIS_NOT_READY"
  | "ERR_REDIS_OUT_OF_MEMORY"
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

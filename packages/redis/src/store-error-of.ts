// What a failure of the Redis client means for the caller: Redis's reply errors are classified by
// their code word (a wrong password is not a script bug, a restart's LOADING is not a lost
// connection), and everything else is Redis being out of reach. The client's error becomes a
// sanitized `cause`: ioredis attaches the failed command with its arguments, and a refused AUTH
// carries the password there.

import { RedisStoreError, type RedisStoreErrorCode } from "./errors.js";

interface Verdict {
  readonly code: RedisStoreErrorCode;
  readonly message: (what: string, word: string) => string;
}

const AUTH: Verdict = {
  code: "ERR_REDIS_AUTH",
  message: (what, word) =>
    word === "NOPERM"
      ? `The Redis user may not run the ${what} (NOPERM): allow it scripting and this bot's keys`
      : word === "NOAUTH"
        ? // Also what a wrong password leads to: the client goes on unauthenticated.
          `Redis refused the ${what} without a valid password (NOAUTH): check the password in the Redis URL`
        : `Redis refused the user name or password for the ${what} (${word}): check the credentials in the Redis URL`,
};

const NOT_READY: Verdict = {
  code: "ERR_REDIS_NOT_READY",
  message: (what, word) =>
    word === "LOADING"
      ? `Redis is loading its data after a restart and cannot run the ${what} yet (LOADING); retried until it is ready`
      : word === "READONLY"
        ? `Redis answered the ${what} as a read-only replica (READONLY): the URL must name the primary (after a failover, the new one); retried`
        : `Redis is not ready for the ${what} (${word}); retried`,
};

const OUT_OF_MEMORY: Verdict = {
  code: "ERR_REDIS_OUT_OF_MEMORY",
  message: (what) =>
    `Redis is out of memory and stores nothing more (OOM, at maxmemory) for the ${what}: raise maxmemory or free memory; retried`,
};

const SCRIPT: Verdict = {
  code: "ERR_REDIS_SCRIPT",
  message: (what, word) =>
    `Redis rejected the ${what} (${word}); check that no other program writes under this key prefix`,
};

/** Reply error code words (the reply's first word) and what each means. */
const VERDICTS: ReadonlyMap<string, Verdict> = new Map([
  ["NOAUTH", AUTH],
  ["WRONGPASS", AUTH],
  ["NOPERM", AUTH],
  ["LOADING", NOT_READY],
  ["BUSY", NOT_READY],
  ["MASTERDOWN", NOT_READY],
  ["READONLY", NOT_READY],
  ["TRYAGAIN", NOT_READY],
  ["CLUSTERDOWN", NOT_READY],
  ["OOM", OUT_OF_MEMORY],
]);

/** `ERR invalid password` (Redis before 6) is an authentication failure under a generic word. */
const OLD_AUTH_FAILURE = /^ERR (invalid password|AUTH <password> called without|Client sent AUTH)/;

/** The error without what the client attached to it (the command and its arguments). */
function sanitized(error: unknown): Error {
  const plain = new Error(error instanceof Error ? error.message : String(error));
  plain.name = error instanceof Error ? error.name : "Error";
  return plain;
}

/**
 * A client failure as one of ours: a reply error by its code word; anything else means Redis
 * could not be reached. `what` names the call in the message.
 */
export function storeErrorOf(error: unknown, what: string): RedisStoreError {
  if (error instanceof RedisStoreError) return error;
  const cause = sanitized(error);
  if (error instanceof Error && error.name === "ReplyError") {
    const word = /^[A-Z]+/.exec(error.message)?.[0] ?? "ERR";
    const verdict = OLD_AUTH_FAILURE.test(error.message) ? AUTH : (VERDICTS.get(word) ?? SCRIPT);
    return new RedisStoreError(verdict.code, verdict.message(what, word), { cause });
  }
  return new RedisStoreError(
    "ERR_REDIS_CONNECTION",
    `Redis could not be reached for the ${what}; check that it runs and the URL is right (retried with backoff)`,
    { cause },
  );
}

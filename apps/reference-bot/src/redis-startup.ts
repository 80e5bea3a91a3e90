// Before a process of a bot run as several says it serves, Redis must have answered: a refused
// password ends the start with one clear line, a Redis that is loading its data or not up yet is
// waited for, and a Redis that may forget what it acknowledged is named loudly (or, with
// --redis-strict, refused). Nothing here ever prints the URL: it may hold a password.

import { type RedisDurability, RedisStoreError, type RedisUpdateQueue } from "@telepace/redis";
import type { Logger } from "pino";
import { StartupError } from "./reference-bot.js";

/** Options of {@link checkRedisAtStart}. */
export interface RedisStartupOptions {
  readonly isStrict: boolean;
  readonly logger: Logger;
  /** Prints one line for the operator (stderr). */
  readonly say: (line: string) => void;
  /** How long an unreachable Redis is waited for, in ms. @defaultValue 30000 */
  readonly reachWithinMs?: number | undefined;
  readonly signal: AbortSignal;
}

const RETRY_MS = 500;
const WHERE = "the Redis URL (REDIS_URL, --redis-url-file or --redis)";

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

/**
 * Waits until Redis answers and checks how it keeps what it stores.
 * @throws {StartupError} for refused credentials, a Redis too old, one not reached in time, or
 *   (strict) one that may forget what it stored.
 */
export async function checkRedisAtStart(
  queue: RedisUpdateQueue,
  options: RedisStartupOptions,
): Promise<RedisDurability> {
  const reachWithinMs = options.reachWithinMs ?? 30_000;
  const deadline = performance.now() + reachWithinMs;
  let waitingSaid = false;
  let durability: RedisDurability | undefined;
  while (durability === undefined) {
    if (options.signal.aborted) throw new StartupError("Stopped before Redis answered");
    try {
      durability = await queue.checkDurability();
    } catch (error) {
      if (!(error instanceof RedisStoreError)) throw error;
      if (error.code === "ERR_REDIS_AUTH" || error.code === "ERR_REDIS_VERSION") {
        throw new StartupError(error.message);
      }
      // A Redis that answers LOADING (or BUSY) is up and will be ready: no deadline.
      const isUp = error.code === "ERR_REDIS_NOT_READY";
      if (!isUp && performance.now() > deadline) {
        throw new StartupError(
          `Cannot reach Redis at ${WHERE} within ${reachWithinMs / 1000} s: check that it runs and the URL`,
        );
      }
      if (!waitingSaid) {
        waitingSaid = true;
        options.say(
          isUp ? `${error.message}; waiting` : `Waiting for Redis at ${WHERE} to answer…`,
        );
      }
      await pause(RETRY_MS, options.signal);
    }
  }
  options.logger.info(
    {
      persistence: durability.persistence ?? "unknown",
      appendfsync: durability.appendfsync,
      maxmemoryPolicy: durability.maxmemoryPolicy,
      replicas: durability.replicas,
      unchecked: durability.unchecked,
    },
    "redis checked",
  );
  if (durability.problems.length === 0) return durability;
  if (options.isStrict) {
    throw new StartupError(
      `Refusing to start (--redis-strict): ${durability.problems.join("; ")}. See "Operating Redis" in @telepace/redis's README`,
    );
  }
  for (const problem of durability.problems) {
    options.logger.warn({ problem }, "redis may lose what it stored");
    options.say(`Warning: ${problem}.`);
  }
  options.say(
    `Warning: this Redis may forget updates the bot confirmed to Telegram; see "Operating Redis" in @telepace/redis's README (--redis-strict refuses such a Redis).`,
  );
  return durability;
}

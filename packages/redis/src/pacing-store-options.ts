// The options of RedisPacingStore, checked whole at construction.

import { checkOptions } from "@telepace/core";
import type { Redis } from "ioredis";
import { checkBotId, checkPrefix, checkRedis, namespaceOf } from "./namespace.js";

/** Options of {@link RedisPacingStore}. */
export interface RedisPacingStoreOptions {
  /**
   * A `redis://` URL (the store creates its client, which fails a command after 2 s instead of
   * queueing it, and quits it on `close()`), or an ioredis client you own and close.
   */
  readonly redis: Redis | string;
  /** The bot's id: the number before the colon of its token. Never pass the token. */
  readonly botId: number | string;
  /** First part of every key. @defaultValue `"telepace"` */
  readonly prefix?: string | undefined;
  /**
   * Whose clock a decision reads: `"redis"` (the server's `TIME`, the same for every process) or
   * `"caller"` (the request's `nowMs`; only for one process, or tests on a manual clock).
   * @defaultValue `"redis"`
   */
  readonly time?: "redis" | "caller" | undefined;
}

const KNOWN = Object.keys({
  redis: true,
  botId: true,
  prefix: true,
  time: true,
} satisfies Record<keyof RedisPacingStoreOptions, true>);

export interface ResolvedPacingStoreOptions {
  readonly redis: Redis | string;
  readonly namespace: string;
  readonly time: "redis" | "caller";
}

export function checkPacingStoreOptions(options: unknown): ResolvedPacingStoreOptions {
  if (options === undefined) {
    throw new TypeError(
      "Expected `options` to be an object with `redis` and `botId`, got undefined",
    );
  }
  const given = checkOptions("options", options, KNOWN);
  const time = given.time ?? "redis";
  if (time !== "redis" && time !== "caller") {
    throw new TypeError('Expected `time` to be "redis" or "caller"');
  }
  return {
    redis: checkRedis<Redis>(given.redis),
    namespace: namespaceOf(checkPrefix(given.prefix), checkBotId(given.botId)),
    time,
  };
}

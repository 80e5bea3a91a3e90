// The options of RedisPacingStore, checked whole at construction.

import { checkOptions } from "@telepace/core";
import type { Redis } from "ioredis";
import { checkBotId, checkPrefix, checkRedis, namespaceOf } from "./namespace.js";
import type { RedisPacingStoreOptions } from "./redis-pacing-store.js";

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

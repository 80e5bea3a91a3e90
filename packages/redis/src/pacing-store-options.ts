// The options of RedisPacingStore, checked whole at construction.

import { checkNumber, checkOptions } from "@telepace/core";
import type { Redis } from "ioredis";
import { checkBotOptions } from "./namespace.js";

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
  /**
   * How far ahead, in ms, the outbox may ask for a global slot (`PacingStore.reserveAheadMs`):
   * when the bot's global window is full, the script reserves the next slot for the asking
   * process and tells it when to start, so a slot is taken when it frees on Redis's timeline,
   * not when that process's timer fires and its next round trip lands. The outbox allows a
   * quarter of this to an op that just came and more the longer an op has waited, up to this
   * (and never more than the global second less its margin). 0 turns reservations off.
   * Range: 0–60000. @defaultValue 1000
   */
  readonly reserveAheadMs?: number | undefined;
}

const KNOWN = Object.keys({
  redis: true,
  botId: true,
  prefix: true,
  time: true,
  reserveAheadMs: true,
} satisfies Record<keyof RedisPacingStoreOptions, true>);

export interface ResolvedPacingStoreOptions {
  readonly redis: Redis | string;
  readonly namespace: string;
  readonly time: "redis" | "caller";
  readonly reserveAheadMs: number;
}

/** Defaults of {@link RedisPacingStoreOptions}. */
export const redisPacingStoreDefaults = Object.freeze({
  reserveAheadMs: 1_000,
});

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
    ...checkBotOptions<Redis>(given),
    time,
    reserveAheadMs:
      given.reserveAheadMs === undefined
        ? redisPacingStoreDefaults.reserveAheadMs
        : checkNumber("reserveAheadMs", given.reserveAheadMs, { min: 0, max: 60_000 }),
  };
}

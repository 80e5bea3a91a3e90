// Where a bot's keys live: `<prefix>:{<botId>}:…`. The bot id (the number before the colon of a
// token) keeps bots apart; the braces put all of a bot's keys in one cluster slot, so each script
// touches one slot. The token itself is never part of a key.

import { checkObject, describeValue } from "@telepace/core";
import type { Redis } from "ioredis";

/** Where a bot's state lives: the options the queue and the job registry both take. */
export interface RedisBotOptions {
  /**
   * A `redis://` URL (the object creates its client, and quits it on `close()`) or an ioredis
   * client you own.
   */
  readonly redis: Redis | string;
  /** The bot's id: the number before the colon of its token. Never pass the token. */
  readonly botId: number | string;
  /** First part of every key. @defaultValue `"telepace"` */
  readonly prefix?: string | undefined;
}

/** The key prefix when none is given. */
export const DEFAULT_KEY_PREFIX = "telepace";

/**
 * The bot id of a token (`123456:ABC…` → `"123456"`), so keys can name the bot without the token.
 *
 * @throws {TypeError} when the value does not start with a numeric id and a colon; the message
 *   never contains the value.
 */
export function botIdOf(token: string): string {
  const match = typeof token === "string" ? /^(\d+):/.exec(token) : null;
  if (match === null) {
    throw new TypeError("Expected a bot token of the form `<bot id>:<secret>`");
  }
  return match[1] as string;
}

/** Checks `botId` (a positive integer, or a string of digits) and returns it as a string. */
export function checkBotId(value: unknown): string {
  if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return String(value);
  if (typeof value === "string" && /^\d{1,20}$/.test(value)) return value;
  throw new TypeError(
    `Expected \`botId\` to be a positive integer or a string of digits (the part of the token before the colon), got ${describeValue(value)}`,
  );
}

/** Checks `prefix`: a non-empty string without braces (they would break the slot tag). */
export function checkPrefix(value: unknown): string {
  if (value === undefined) return DEFAULT_KEY_PREFIX;
  if (typeof value !== "string" || value.length === 0 || /[{}]/.test(value)) {
    throw new TypeError(
      `Expected \`prefix\` to be a non-empty string without braces, got ${describeValue(value)}`,
    );
  }
  return value;
}

/** A bot's key namespace. */
export function namespaceOf(prefix: string, botId: string): string {
  return `${prefix}:{${botId}}`;
}

/** Checks the `redis` option: a URL or an ioredis-like client. */
export function checkRedis<T>(value: unknown): T | string {
  if (typeof value === "string" && /^rediss?:\/\//.test(value)) return value;
  if (typeof value === "object" && value !== null) {
    const client = checkObject("redis", value);
    if (typeof client.defineCommand === "function" && typeof client.info === "function") {
      return value as T;
    }
  }
  // A URL may hold a password: a string is never shown.
  const got = typeof value === "string" ? "a string that is not such a URL" : describeValue(value);
  throw new TypeError(
    `Expected \`redis\` to be a redis:// or rediss:// URL or an ioredis client, got ${got}`,
  );
}

/**
 * Checks `redis`, `botId` and `prefix` of options already checked whole; returns the `redis`
 * option and the bot's namespace.
 */
export function checkBotOptions<T>(given: Readonly<Record<string, unknown>>): {
  readonly redis: T | string;
  readonly namespace: string;
} {
  return {
    redis: checkRedis<T>(given.redis),
    namespace: namespaceOf(checkPrefix(given.prefix), checkBotId(given.botId)),
  };
}

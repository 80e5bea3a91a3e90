// Options of the simulator, their defaults (one frozen object) and their validation, so every
// bad value fails at start() with a message naming the option.

import {
  type Clock,
  checkBoolean,
  checkClock,
  checkFunction,
  checkLogger,
  checkObject,
  checkOptionalNumber,
  checkOptions,
  describeValue,
  type Logger,
  systemClock,
} from "@telepace/core";

export type { Logger };

/** One bot served by the simulator. */
export interface BotOptions {
  /**
   * The bot's token, `<numeric id>:<secret>` as Telegram issues them. The numeric part becomes
   * the bot's user id.
   * @defaultValue a fresh random token
   */
  readonly token?: string;
  /** Username without `@` (5–32 of `[A-Za-z0-9_]`). @defaultValue `"telepace_sim_bot"` (`_2`, `_3`… for more bots) */
  readonly username?: string;
  /** Display name. @defaultValue `"Telepace Sim Bot"` */
  readonly firstName?: string;
  /** `getMe().can_join_groups`. @defaultValue true */
  readonly canJoinGroups?: boolean;
  /**
   * Privacy mode off. When false (Telegram's default), the bot sees in groups only commands,
   * replies to its own messages, mentions of it and service messages.
   * @defaultValue false
   */
  readonly canReadAllGroupMessages?: boolean;
}

/**
 * Telegram's flood limits, all in Telegram time (see {@link BotApiSimOptions.timeScale}): token
 * buckets per chat and per bot, a sliding minute per group. Sends and (by default) edits count;
 * reads, deletes and chat actions never do.
 */
export interface RateLimitOptions {
  /** Sustained messages per second into one chat (private or group). Range > 0. @defaultValue 1 */
  readonly perChatPerSecond: number;
  /** Messages one chat accepts at once before the per-second pace applies. Integer >= 1. @defaultValue 3 */
  readonly perChatBurst: number;
  /** At most this many messages into one group or supergroup in any 60 s. Integer >= 1. @defaultValue 20 */
  readonly groupPerMinute: number;
  /** Sustained messages per second over all chats of one bot. Range > 0. @defaultValue 30 */
  readonly globalPerSecond: number;
  /** Messages a bot may send at once over all chats. Integer >= 1. @defaultValue 30 */
  readonly globalBurst: number;
  /** Whether edits (editMessageText, editMessageCaption, editMessageReplyMarkup) count. @defaultValue true */
  readonly countEdits: boolean;
  /**
   * Sustained sendMessageDraft calls per second into one chat. Telegram documents no limit for
   * drafts (and its open-source server applies none); this is the simulator's guard against a
   * streamer that floods, not Telegram's number. Range > 0. @defaultValue 5
   */
  readonly draftsPerSecond: number;
  /** Drafts one chat accepts at once before `draftsPerSecond` applies. Integer >= 1. @defaultValue 5 */
  readonly draftBurst: number;
}

/** Options of {@link start}. */
export interface BotApiSimOptions {
  /** TCP port on the loopback interface; 0 picks a free one. Integer 0–65535. @defaultValue 0 */
  readonly port?: number;
  /**
   * Address to bind: loopback (`127.0.0.1`, `::1` or `localhost`), or any other address when
   * `allowNonLoopback` is set. @defaultValue `"127.0.0.1"`
   */
  readonly host?: string;
  /**
   * Let `host` be an address other than loopback (`0.0.0.0`, a LAN address). The control API and
   * the chat page have no authentication, so whoever reaches the port can act as any user and
   * read every chat; start() emits a process warning (and a warn log line) when it binds so.
   * @defaultValue false
   */
  readonly allowNonLoopback?: boolean;
  /** Shorthand for `bots: [{ token }]`. Ignored when `bots` is given. */
  readonly token?: string;
  /** The bots to serve. At least one. @defaultValue one bot with a random token */
  readonly bots?: readonly BotOptions[];
  /**
   * Telegram's flood limits; `false` turns them off. A partial object overrides the defaults.
   * @defaultValue {@link defaultRateLimits}
   */
  readonly rateLimits?: Partial<RateLimitOptions> | false;
  /**
   * How much faster than real time Telegram's limits run: with 20, a 1 message/s limit allows 20
   * messages per real second and `retry_after` is divided by 20 (so it may be fractional).
   * Range > 0 and <= 10000. @defaultValue 1
   */
  readonly timeScale?: number;
  /** Whether file downloads honour `Range` with 206 responses. @defaultValue true */
  readonly rangeRequests?: boolean;
  /** Total bytes of uploaded files kept in memory. Integer >= 0. @defaultValue 536_870_912 (512 MiB) */
  readonly maxFileStorageBytes?: number;
  /** Largest request body accepted, after decompression. Integer >= 1024. @defaultValue 54_525_952 (52 MiB) */
  readonly maxRequestBytes?: number;
  /**
   * Real milliseconds a connection may take to send a request's headers (its first, or the next
   * one on a kept-alive connection); then it gets 408 and is closed, so slow or stalled clients
   * cannot hold the server. Integer 10–300 000. @defaultValue 5000
   */
  readonly headersTimeoutMs?: number;
  /**
   * Open connections at most. At the cap a new connection first displaces the oldest one that is
   * still waiting to send headers; when every connection is busy with a request, it is refused.
   * Integer >= 1. @defaultValue 1024
   */
  readonly maxConnections?: number;
  /** Updates one bot may have waiting for getUpdates. Integer >= 1. @defaultValue 100_000 */
  readonly maxPendingUpdates?: number;
  /** How long an unconfirmed update is kept, in ms. Range > 0. @defaultValue 86_400_000 (24 h) */
  readonly updateRetentionMs?: number;
  /** Users the control API may create. Integer >= 1. @defaultValue 100_000 */
  readonly maxUsers?: number;
  /** Chats the control API may create. Integer >= 1. @defaultValue 100_000 */
  readonly maxChats?: number;
  /** Messages kept per chat; the oldest are forgotten beyond it. Integer >= 1. @defaultValue 10_000 */
  readonly maxMessagesPerChat?: number;
  /** Transcript events kept per chat; the oldest are dropped (and counted) beyond it. Integer >= 1. @defaultValue 10_000 */
  readonly maxTranscriptEvents?: number;
  /** Time source for limits, long polls, latency and timestamps. @defaultValue systemClock */
  readonly clock?: Clock;
  /**
   * Unix time in ms at which `clock.now()` reads 0; message dates are `epochMs + clock.now()`.
   * @defaultValue `performance.timeOrigin` (right for the system clock)
   */
  readonly epochMs?: number;
  /** Uniform random numbers in [0, 1), for ids and the random error fault. @defaultValue Math.random */
  readonly random?: () => number;
  /**
   * A pino-compatible logger (`@telepace/core` `Logger`) for request, limit and fault lines (never
   * the token). A logger that throws or returns a rejected promise is ignored. @defaultValue none
   */
  readonly logger?: Logger;
}

/** The rate limits used when `rateLimits` is not given. */
export const defaultRateLimits: Readonly<RateLimitOptions> = Object.freeze({
  perChatPerSecond: 1,
  perChatBurst: 3,
  groupPerMinute: 20,
  globalPerSecond: 30,
  globalBurst: 30,
  countEdits: true,
  draftsPerSecond: 5,
  draftBurst: 5,
});

/** Defaults of {@link BotApiSimOptions}. */
export const botApiSimDefaults = Object.freeze({
  port: 0,
  host: "127.0.0.1",
  allowNonLoopback: false,
  timeScale: 1,
  rangeRequests: true,
  maxFileStorageBytes: 512 * 1024 * 1024,
  maxRequestBytes: 52 * 1024 * 1024,
  headersTimeoutMs: 5000,
  maxConnections: 1024,
  maxPendingUpdates: 100_000,
  updateRetentionMs: 24 * 60 * 60 * 1000,
  maxUsers: 100_000,
  maxChats: 100_000,
  maxMessagesPerChat: 10_000,
  maxTranscriptEvents: 10_000,
});

/** Options after defaults and validation. */
export interface ResolvedOptions {
  readonly port: number;
  readonly host: string;
  /** Whether `host` is a loopback address. */
  readonly isLoopback: boolean;
  readonly bots: readonly BotOptions[];
  readonly rateLimits: Readonly<RateLimitOptions> | false;
  readonly timeScale: number;
  readonly rangeRequests: boolean;
  readonly maxFileStorageBytes: number;
  readonly maxRequestBytes: number;
  readonly headersTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxPendingUpdates: number;
  readonly updateRetentionMs: number;
  readonly maxUsers: number;
  readonly maxChats: number;
  readonly maxMessagesPerChat: number;
  readonly maxTranscriptEvents: number;
  readonly clock: Clock;
  readonly epochMs: number;
  readonly random: () => number;
  readonly logger: Logger;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "::1", "localhost"]);

/** The keys of {@link BotApiSimOptions}, for the unknown-key check. */
const OPTION_KEYS: readonly (keyof BotApiSimOptions)[] = [
  "port",
  "host",
  "allowNonLoopback",
  "token",
  "bots",
  "rateLimits",
  "timeScale",
  "rangeRequests",
  "maxFileStorageBytes",
  "maxRequestBytes",
  "headersTimeoutMs",
  "maxConnections",
  "maxPendingUpdates",
  "updateRetentionMs",
  "maxUsers",
  "maxChats",
  "maxMessagesPerChat",
  "maxTranscriptEvents",
  "clock",
  "epochMs",
  "random",
  "logger",
];

const BOT_KEYS: readonly (keyof BotOptions)[] = [
  "token",
  "username",
  "firstName",
  "canJoinGroups",
  "canReadAllGroupMessages",
];

const RATE_LIMIT_KEYS: readonly (keyof RateLimitOptions)[] = [
  "perChatPerSecond",
  "perChatBurst",
  "groupPerMinute",
  "globalPerSecond",
  "globalBurst",
  "countEdits",
  "draftsPerSecond",
  "draftBurst",
];

/** Validates and completes rate limits; `false` stays off. */
export function resolveRateLimits(
  value: unknown,
  name = "rateLimits",
): Readonly<RateLimitOptions> | false {
  if (value === false) return false;
  if (value === undefined) return defaultRateLimits;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(
      `Expected \`${name}\` to be an object or false, got ${describeValue(value)}`,
    );
  }
  const given = checkOptions(name, value, RATE_LIMIT_KEYS);
  const d = defaultRateLimits;
  return Object.freeze({
    perChatPerSecond: checkOptionalNumber(
      `${name}.perChatPerSecond`,
      given.perChatPerSecond,
      d.perChatPerSecond,
      { greaterThan: 0 },
    ),
    perChatBurst: checkOptionalNumber(`${name}.perChatBurst`, given.perChatBurst, d.perChatBurst, {
      integer: true,
      min: 1,
    }),
    groupPerMinute: checkOptionalNumber(
      `${name}.groupPerMinute`,
      given.groupPerMinute,
      d.groupPerMinute,
      { integer: true, min: 1 },
    ),
    globalPerSecond: checkOptionalNumber(
      `${name}.globalPerSecond`,
      given.globalPerSecond,
      d.globalPerSecond,
      { greaterThan: 0 },
    ),
    globalBurst: checkOptionalNumber(`${name}.globalBurst`, given.globalBurst, d.globalBurst, {
      integer: true,
      min: 1,
    }),
    countEdits: checkBoolean(`${name}.countEdits`, given.countEdits, d.countEdits),
    draftsPerSecond: checkOptionalNumber(
      `${name}.draftsPerSecond`,
      given.draftsPerSecond,
      d.draftsPerSecond,
      { greaterThan: 0 },
    ),
    draftBurst: checkOptionalNumber(`${name}.draftBurst`, given.draftBurst, d.draftBurst, {
      integer: true,
      min: 1,
    }),
  });
}

function resolveBots(given: Readonly<Record<string, unknown>>): readonly BotOptions[] {
  let bots: readonly unknown[];
  if (given.bots !== undefined) {
    if (!Array.isArray(given.bots) || given.bots.length === 0) {
      throw new RangeError(
        `Expected \`bots\` to be a non-empty array, got ${Array.isArray(given.bots) ? "[]" : describeValue(given.bots)}`,
      );
    }
    bots = given.bots;
  } else {
    bots = given.token === undefined ? [{}] : [{ token: given.token }];
  }
  return bots.map((value, index) => {
    const name = `bots[${index}]`;
    const bot = checkOptions(name, checkObject(name, value), BOT_KEYS) as BotOptions;
    checkBoolean(`${name}.canJoinGroups`, bot.canJoinGroups, true);
    checkBoolean(`${name}.canReadAllGroupMessages`, bot.canReadAllGroupMessages, false);
    if (
      bot.username !== undefined &&
      (typeof bot.username !== "string" || !/^[A-Za-z][A-Za-z0-9_]{4,31}$/.test(bot.username))
    ) {
      throw new RangeError(
        `Expected \`${name}.username\` to be 5–32 characters of [A-Za-z0-9_] starting with a letter, got ${describeValue(bot.username)}`,
      );
    }
    if (
      bot.firstName !== undefined &&
      (typeof bot.firstName !== "string" || bot.firstName.length === 0)
    ) {
      throw new RangeError(
        `Expected \`${name}.firstName\` to be a non-empty string, got ${describeValue(bot.firstName)}`,
      );
    }
    return bot;
  });
}

/**
 * Applies defaults and validates every option, throwing the house TypeError/RangeError; an
 * unknown key names the closest valid one, and `null` is never taken for "use the default".
 */
export function resolveOptions(options?: BotApiSimOptions): ResolvedOptions {
  const given = checkOptions("options", options, OPTION_KEYS);
  const d = botApiSimDefaults;
  const int = (name: keyof typeof botApiSimDefaults, min: number, max?: number): number =>
    checkOptionalNumber(name, given[name], d[name] as number, {
      integer: true,
      min,
      ...(max === undefined ? {} : { max }),
    });
  const host = given.host === undefined ? d.host : given.host;
  const allowNonLoopback = checkBoolean(
    "allowNonLoopback",
    given.allowNonLoopback,
    d.allowNonLoopback,
  );
  const isLoopback = typeof host === "string" && LOOPBACK_HOSTS.has(host);
  if (!isLoopback && !allowNonLoopback) {
    throw new RangeError(
      `Expected \`host\` to be a loopback address (127.0.0.1, ::1 or localhost) unless \`allowNonLoopback\` is true, got ${describeValue(host)}`,
    );
  }
  if (typeof host !== "string" || host.trim() === "") {
    throw new TypeError(`Expected \`host\` to be a non-empty string, got ${describeValue(host)}`);
  }
  return {
    port: int("port", 0, 65535),
    host,
    isLoopback,
    bots: resolveBots(given),
    rateLimits: resolveRateLimits(given.rateLimits),
    timeScale: checkOptionalNumber("timeScale", given.timeScale, d.timeScale, {
      greaterThan: 0,
      max: 10_000,
    }),
    rangeRequests: checkBoolean("rangeRequests", given.rangeRequests, d.rangeRequests),
    maxFileStorageBytes: int("maxFileStorageBytes", 0),
    maxRequestBytes: int("maxRequestBytes", 1024),
    headersTimeoutMs: int("headersTimeoutMs", 10, 300_000),
    maxConnections: int("maxConnections", 1),
    maxPendingUpdates: int("maxPendingUpdates", 1),
    updateRetentionMs: checkOptionalNumber(
      "updateRetentionMs",
      given.updateRetentionMs,
      d.updateRetentionMs,
      { greaterThan: 0 },
    ),
    maxUsers: int("maxUsers", 1),
    maxChats: int("maxChats", 1),
    maxMessagesPerChat: int("maxMessagesPerChat", 1),
    maxTranscriptEvents: int("maxTranscriptEvents", 1),
    clock: checkClock(given.clock, systemClock),
    epochMs: checkOptionalNumber("epochMs", given.epochMs, performance.timeOrigin, { min: 0 }),
    random:
      given.random === undefined
        ? Math.random
        : checkFunction<() => number>("random", given.random),
    logger: checkLogger(given.logger),
  };
}

// The options of TelegramOutbox and of its calls: each checked once, whole, and resolved into the
// numbers the scheduler runs on (the pacing of a private chat and of a group among them).

import {
  type Clock,
  checkBoolean,
  checkClock,
  checkFunction,
  checkLogger,
  checkMethods,
  checkOptionalNumber,
  checkOptions,
  checkSignal,
  closestName,
  describeValue,
  type Logger,
  type NumberRule,
  systemClock,
} from "@telepace/core";
import { isGroupChat } from "./chat.js";
import { classifyFailure, type FailureClassifier } from "./classify.js";
import { outboxDefaults } from "./defaults.js";
import { MemoryPacingStore, type PacingStore } from "./pacing-store.js";

/** Options of {@link TelegramOutbox}. */
export interface TelegramOutboxOptions {
  /** Time source for pacing, freezes, backoff and the close deadline. @defaultValue systemClock */
  readonly clock?: Clock | undefined;
  /**
   * Requests per second to one private chat (positive chat id). 0 turns per-chat pacing off, as
   * in a single-worker outbox. Range: >= 0. @defaultValue 1
   */
  readonly privateChatRps?: number | undefined;
  /**
   * Long-run requests per second to one group, supergroup or channel (negative id or
   * `@username`); see `groupBurst` for how they may be spent. 0 turns group pacing off.
   * Range: >= 0. @defaultValue 20 / 60
   */
  readonly groupChatRps?: number | undefined;
  /**
   * Requests one group may take in a row: at most `groupBurst` in any window of
   * `groupBurst / groupChatRps` seconds (plus `pacingMarginMs`), and never closer together than
   * `privateChatRps` allows — Telegram's one message per second holds in every chat. 1 spaces a
   * group's requests evenly, `1 / groupChatRps` apart plus the margin: with `pacingMarginMs: 0`
   * exactly a single-worker outbox's pacing. Range: integer >= 1. @defaultValue 20
   */
  readonly groupBurst?: number | undefined;
  /**
   * Places of a group's window that ops of edit priority (`Priority.edit` and lower priorities)
   * leave free for sends and deletes, so a burst of progress edits never makes a final message
   * wait for the window. Edits always keep at least one place. Range: integer >= 0.
   * @defaultValue 3
   */
  readonly sendReserve?: number | undefined;
  /**
   * Most requests over all chats that can reach Telegram in any one second: a request counts from
   * its start until a second after its answer (it reaches Telegram somewhere in between), and
   * one starts only while fewer are counted. 0 turns the global budget off.
   * Range: integer >= 0. @defaultValue 30
   */
  readonly globalRps?: number | undefined;
  /**
   * Most paid broadcast sends (ops with `paidBroadcast`) that can reach Telegram in any one
   * second, counted as `globalRps` counts: their own budget, apart from `globalRps`. Telegram allows a bot that enabled paid
   * broadcasts up to 1000 such messages a second (0.1 Stars each beyond the free 30/s).
   * 0 turns the paid budget off. Range: integer >= 0. @defaultValue 1000
   */
  readonly paidBroadcastRps?: number | undefined;
  /**
   * Milliseconds added to a group's window, and the most added to the global second the pacing
   * store counts in: a window spends its whole limit, so without a margin a request that reaches
   * Telegram faster than the one it follows a window later lands inside Telegram's window and
   * earns a 429. The global second's window reaches back to this outbox's earliest start that
   * can still share a Telegram second with the next one, up to this, so a store shared by
   * several processes counts it for all of them (the outbox's own requests are kept apart by
   * their answers whatever this is). Per-chat spacing gets none (Telegram allows a short burst
   * in a chat). Range: >= 0. @defaultValue 100
   */
  readonly pacingMarginMs?: number | undefined;
  /**
   * Chats with a request in flight at the same time (one chat never has two).
   * Range: integer >= 1. @defaultValue 32
   */
  readonly maxInFlight?: number | undefined;
  /**
   * Ops waiting in the outbox; at the bound a new op is `rejected` (a newer op for a pending key
   * still coalesces). Range: integer >= 1. @defaultValue 10000
   */
  readonly maxPending?: number | undefined;
  /** Ops waiting for one chat. Range: integer >= 1. @defaultValue 1000 */
  readonly maxPendingPerChat?: number | undefined;
  /**
   * Longest 429 wait (ms) an op sits out. A longer `retry_after` fails the op — and every op that
   * would wait behind the same freeze — with `ERR_RETRY_AFTER_TOO_LONG`, instead of stalling.
   * Range: >= 0. @defaultValue 300000
   */
  readonly maxRetryAfterMs?: number | undefined;
  /**
   * Attempts per op, the first included, over 429s and transient failures alike.
   * Range: integer >= 1. @defaultValue 10
   */
  readonly maxAttempts?: number | undefined;
  /**
   * First backoff (ms) of a chat after a transient failure; doubles per consecutive failure.
   * Range: >= 0. @defaultValue 1000
   */
  readonly retryBaseDelayMs?: number | undefined;
  /** Longest transient backoff (ms). Range: >= 0. @defaultValue 30000 */
  readonly retryMaxDelayMs?: number | undefined;
  /** Where pacing state lives. @defaultValue a new {@link MemoryPacingStore} */
  readonly pacingStore?: PacingStore | undefined;
  /** Decides what a failed attempt means. @defaultValue {@link classifyFailure} */
  readonly classifyFailure?: FailureClassifier | undefined;
  /** A pino-compatible logger. @defaultValue none (silent) */
  readonly logger?: Logger | undefined;
}

/** Options of {@link TelegramOutbox.close}. */
export interface OutboxCloseOptions {
  /**
   * true: keep sending until nothing is pending or the deadline passes. false: pending ops settle
   * as `closed` at once; in-flight requests may still finish until the deadline.
   * @defaultValue true
   */
  readonly drain?: boolean | undefined;
  /**
   * Deadline (ms). What is still pending then settles as `closed`; in-flight requests are aborted
   * and settle as `closed`. Range: >= 0. @defaultValue 10000
   */
  readonly timeoutMs?: number | undefined;
}

/** How one chat is paced: the spacing, and for groups a sliding window with a send reserve. */
export interface ChatPacing {
  readonly intervalMs: number;
  /** Most paced requests in any `windowMs`; 0: no window. */
  readonly windowLimit: number;
  readonly windowMs: number;
  /** Places of the window that ops of edit priority leave free. */
  readonly reserve: number;
}

/** The pacing of a lane without a chat: the global budget only. */
export const UNPACED: ChatPacing = Object.freeze({
  intervalMs: 0,
  windowLimit: 0,
  windowMs: 0,
  reserve: 0,
});

/** The global budget's window before its margin. */
export const GLOBAL_WINDOW_MS = 1000;

/** {@link TelegramOutboxOptions} checked, with every default applied. */
export interface ResolvedOutboxOptions {
  readonly clock: Clock;
  readonly privatePacing: ChatPacing;
  readonly groupPacing: ChatPacing;
  readonly globalLimit: number;
  /** `paidBroadcastRps`: the paid-broadcast window's limit. */
  readonly paidBroadcastLimit: number;
  /** `pacingMarginMs`: a group window's margin, and the most the global second gets. */
  readonly marginMs: number;
  readonly maxInFlight: number;
  readonly maxPending: number;
  readonly maxPendingPerChat: number;
  readonly maxRetryAfterMs: number;
  readonly maxAttempts: number;
  readonly retryBaseDelayMs: number;
  readonly retryMaxDelayMs: number;
  readonly store: PacingStore;
  readonly classify: FailureClassifier;
  readonly logger: Logger;
}

// Every option once: `satisfies` fails the build when an option is added without its name here.
/**
 * The name of every option of {@link TelegramOutboxOptions}, frozen: what the constructor accepts
 * (any other key is a `TypeError` naming the closest of these), for a wrapper that checks or
 * passes on outbox options of its own.
 */
export const outboxOptionNames: readonly (keyof TelegramOutboxOptions)[] = Object.freeze(
  Object.keys({
    clock: true,
    privateChatRps: true,
    groupChatRps: true,
    groupBurst: true,
    sendReserve: true,
    globalRps: true,
    paidBroadcastRps: true,
    pacingMarginMs: true,
    maxInFlight: true,
    maxPending: true,
    maxPendingPerChat: true,
    maxRetryAfterMs: true,
    maxAttempts: true,
    retryBaseDelayMs: true,
    retryMaxDelayMs: true,
    pacingStore: true,
    classifyFailure: true,
    logger: true,
  } satisfies Record<keyof TelegramOutboxOptions, true>) as (keyof TelegramOutboxOptions)[],
);

/** Names users bring from p-queue, Bottleneck and grammY's plugins, and the option meant here. */
const peerNames: Readonly<Record<string, keyof TelegramOutboxOptions>> = {
  concurrency: "maxInFlight",
  maxConcurrency: "maxInFlight",
  maxConcurrent: "maxInFlight",
  maxRetries: "maxAttempts",
  maxRetryAttempts: "maxAttempts",
  maxDelaySeconds: "maxRetryAfterMs",
};

/**
 * A peer library's name for an option (or a typo of one that is no typo of an option here) gets
 * that option as its hint; every other key is left to `checkOptions`.
 */
function checkPeerNames(options: unknown): void {
  if (typeof options !== "object" || options === null) return;
  for (const key of Object.keys(options)) {
    if ((outboxOptionNames as readonly string[]).includes(key)) continue;
    const peer = Object.hasOwn(peerNames, key)
      ? key
      : closestName(key, outboxOptionNames) === undefined
        ? closestName(key, Object.keys(peerNames))
        : undefined;
    if (peer === undefined) continue;
    throw new TypeError(
      `Unknown option \`${key}\` in \`options\` (did you mean \`${peerNames[peer]}\`?)`,
    );
  }
}

type NumericOption = {
  [K in keyof TelegramOutboxOptions]-?: NonNullable<TelegramOutboxOptions[K]> extends number
    ? K
    : never;
}[keyof TelegramOutboxOptions];

function intervalOf(rps: number): number {
  // Rounded to the microsecond so 20/60 rps is exactly 3000 ms (and 20 of them exactly a minute).
  return rps === 0 ? 0 : Math.round(1_000_000 / rps) / 1000;
}

/**
 * Checks the constructor's options whole and resolves them.
 *
 * @throws {TypeError} when `options` is not an object, has an unknown key (naming the closest
 * valid one), or an option has the wrong type (`null` included).
 * @throws {RangeError} when a number is out of its range.
 */
export function resolveOutboxOptions(options: unknown): ResolvedOutboxOptions {
  checkPeerNames(options);
  const given = checkOptions("options", options, outboxOptionNames);
  const number = (name: NumericOption, rule: NumberRule): number =>
    checkOptionalNumber(name, given[name], outboxDefaults[name], rule);
  const privateIntervalMs = intervalOf(number("privateChatRps", { min: 0 }));
  const groupIntervalMs = intervalOf(number("groupChatRps", { min: 0 }));
  const groupBurst = number("groupBurst", { integer: true, min: 1 });
  const sendReserve = number("sendReserve", { integer: true, min: 0 });
  const marginMs = number("pacingMarginMs", { min: 0 });
  return {
    privatePacing: { ...UNPACED, intervalMs: privateIntervalMs },
    groupPacing:
      groupIntervalMs === 0
        ? UNPACED
        : {
            intervalMs: Math.min(privateIntervalMs, groupIntervalMs),
            windowLimit: groupBurst,
            windowMs: groupBurst * groupIntervalMs + marginMs,
            reserve: Math.min(sendReserve, groupBurst - 1),
          },
    globalLimit: number("globalRps", { integer: true, min: 0 }),
    paidBroadcastLimit: number("paidBroadcastRps", { integer: true, min: 0 }),
    marginMs,
    maxInFlight: number("maxInFlight", { integer: true, min: 1 }),
    maxPending: number("maxPending", { integer: true, min: 1 }),
    maxPendingPerChat: number("maxPendingPerChat", { integer: true, min: 1 }),
    maxRetryAfterMs: number("maxRetryAfterMs", { min: 0 }),
    maxAttempts: number("maxAttempts", { integer: true, min: 1 }),
    retryBaseDelayMs: number("retryBaseDelayMs", { min: 0 }),
    retryMaxDelayMs: number("retryMaxDelayMs", { min: 0 }),
    clock: checkClock(given.clock, systemClock),
    store: checkPacingStore(given.pacingStore) ?? new MemoryPacingStore(),
    classify:
      given.classifyFailure === undefined
        ? classifyFailure
        : checkFunction<FailureClassifier>("classifyFailure", given.classifyFailure),
    logger: checkLogger(given.logger),
  };
}

function checkPacingStore(value: unknown): PacingStore | undefined {
  const store = checkMethods<PacingStore>("pacingStore", value, ["acquire", "freeze"]);
  if (store?.onFreeze !== undefined && typeof store.onFreeze !== "function") {
    throw new TypeError(
      `Expected \`pacingStore.onFreeze\` to be a function or absent, got ${describeValue(store.onFreeze)}`,
    );
  }
  return store;
}

/** The pacing of a chat's lane: a group's window, a private chat's spacing, or none. */
export function pacingOf(resolved: ResolvedOutboxOptions, chatKey: string | undefined): ChatPacing {
  if (chatKey === undefined) return UNPACED;
  return isGroupChat(chatKey) ? resolved.groupPacing : resolved.privatePacing;
}

/** {@link OutboxCloseOptions} checked, with its defaults. */
export interface ResolvedCloseOptions {
  readonly drain: boolean;
  readonly timeoutMs: number;
}

/**
 * Checks the options of `close()` whole.
 *
 * @throws {TypeError|RangeError} naming the option.
 */
export function resolveCloseOptions(options: unknown): ResolvedCloseOptions {
  const given = checkOptions("options", options, ["drain", "timeoutMs"]);
  return {
    drain: checkBoolean("drain", given.drain, true),
    timeoutMs: checkOptionalNumber("timeoutMs", given.timeoutMs, outboxDefaults.closeTimeoutMs, {
      min: 0,
    }),
  };
}

/**
 * Checks the options of `enqueue()` whole and returns its signal.
 *
 * @throws {TypeError} naming the option.
 */
export function resolveEnqueueSignal(options: unknown): AbortSignal | undefined {
  return checkSignal("signal", checkOptions("options", options, ["signal"]).signal);
}

// RedisPacingStore: the outbox's PacingStore shared by every process of one bot. Each decision is
// one Lua script over the chat's spacing and window, the global window and the freezes, on Redis
// time, so the processes pace as one and their clocks do not matter.

import { randomUUID } from "node:crypto";
import type {
  FreezeListener,
  PacingDecision,
  PacingDenial,
  PacingRequest,
  PacingStore,
} from "@telepace/outbox";
import type { Redis } from "ioredis";
import { ScriptConnection } from "./connection.js";
import { ACQUIRE_SCRIPT, FREEZE_SCRIPT } from "./pacing-scripts.js";
import { checkPacingStoreOptions, type RedisPacingStoreOptions } from "./pacing-store-options.js";

/** A fresh view of a {@link RedisPacingStore}. */
export interface RedisPacingStoreSnapshot {
  /** Slots granted, reserved ones included. */
  readonly granted: number;
  /** Granted slots that were reserved ahead (`startInMs` > 0). */
  readonly reserved: number;
  readonly denied: number;
  /** Calls that failed (Redis unreachable, a script error); the outbox held and retried them. */
  readonly failures: number;
  /** Whether the last call reached Redis. */
  readonly isReachable: boolean;
}

const GRANTED: PacingDecision = Object.freeze({ granted: true });
/** What the freeze script publishes: `g <ms>` (every chat) or `c <ms> <chat key>`. */
const FREEZE_MESSAGE = /^(?:g (\d+(?:\.\d+)?)|c (\d+(?:\.\d+)?) (.+))$/s;
const DENIALS: ReadonlySet<string> = new Set<PacingDenial>([
  "global-frozen",
  "chat-frozen",
  "chat-paced",
  "chat-reserved",
  "global-budget",
]);

/**
 * A {@link PacingStore} in Redis: give every process's outbox one, with the same `botId`, and
 * Telegram's limits (per chat, per group window with its send reserve, global with its margin,
 * 429 freezes) hold for the bot as a whole.
 *
 * @example
 * const pacingStore = new RedisPacingStore({ redis: process.env.REDIS_URL!, botId: botIdOf(token) });
 * const outbox = new TelegramOutbox({ pacingStore });
 */
export class RedisPacingStore implements PacingStore, AsyncDisposable {
  /**
   * How far ahead the outbox asks this store to reserve global slots, in ms: the
   * `reserveAheadMs` option.
   */
  readonly reserveAheadMs: number;
  readonly #connection: ScriptConnection;
  readonly #ns: string;
  readonly #freezeChannel: string;
  /** Names this store (this process) among those sharing the bot's global window. */
  readonly #id = randomUUID();
  readonly #freezeListeners = new Set<FreezeListener>();
  /** Our own connection in subscriber mode, opened by the first `onFreeze`. */
  #subscriber: Redis | undefined;
  readonly #callerTime: boolean;
  #granted = 0;
  #reserved = 0;
  #denied = 0;
  #failures = 0;
  #isReachable = true;

  /** @throws {TypeError} naming the option, when options are malformed. */
  constructor(options: RedisPacingStoreOptions) {
    const resolved = checkPacingStoreOptions(options);
    this.#connection = new ScriptConnection(resolved.redis);
    this.#ns = `${resolved.namespace}:pace`;
    this.#freezeChannel = `${this.#ns}:freezes`;
    this.#callerTime = resolved.time === "caller";
    this.reserveAheadMs = resolved.reserveAheadMs;
  }

  /**
   * Grants a slot now, reserves a global slot up to the request's `maxStartInMs` ahead
   * (`{ granted: true, startInMs }`, counted from when Redis decided), or says how long to wait
   * (milliseconds from when Redis decided) and why.
   * @throws {RedisStoreError} when Redis cannot be reached or rejects the script; the outbox
   *   then holds every op and asks again after a backoff.
   */
  async acquire(request: PacingRequest): Promise<PacingDecision> {
    const chat = request.chatKey;
    // Paid broadcasts have a global window of their own (`p:`); the freeze of everything is one.
    const window = request.paidBroadcast === true ? "p" : "g";
    const keys = [
      `${this.#ns}:${window}:starts`,
      `${this.#ns}:g:frozen`,
      `${this.#ns}:${window}:retain`,
      `${this.#ns}:seq`,
      `${this.#ns}:c:${chat ?? ""}`,
      `${this.#ns}:cw:${chat ?? ""}`,
      `${this.#ns}:${window}:windows`,
    ];
    const args = [
      this.#callerTime ? String(request.nowMs) : "",
      chat === undefined ? "0" : "1",
      String(request.intervalMs),
      String(request.chatLimit),
      String(request.chatWindowMs),
      String(request.chatReserve),
      request.paced ? "1" : "0",
      String(request.globalLimit),
      String(request.globalWindowMs),
      String(request.maxStartInMs ?? 0),
      this.#id,
    ];
    const reply = await this.#run(ACQUIRE_SCRIPT, [...keys, ...args], "pacing acquire");
    if (Array.isArray(reply) && reply[0] === "ok") {
      const startInMs = reply.length > 1 ? Number(reply[1]) : 0;
      if (!(startInMs >= 0)) {
        this.#failures++;
        throw new TypeError("The pacing script answered in an unexpected shape");
      }
      this.#granted++;
      if (startInMs === 0) return GRANTED;
      this.#reserved++;
      return { granted: true, startInMs };
    }
    const [kind, reason, wait] = Array.isArray(reply) ? (reply as unknown[]) : [];
    const waitMs = Number(wait);
    if (kind !== "wait" || typeof reason !== "string" || !DENIALS.has(reason) || !(waitMs > 0)) {
      this.#failures++;
      throw new TypeError("The pacing script answered in an unexpected shape");
    }
    this.#denied++;
    return { granted: false, waitMs, reason: reason as PacingDenial };
  }

  /** Freezes a chat (every chat when `chatKey` is `undefined`) for `durationMs`, for all processes. */
  async freeze(chatKey: string | undefined, durationMs: number, nowMs: number): Promise<void> {
    const args = [
      `${this.#ns}:g:frozen`,
      `${this.#ns}:c:${chatKey ?? ""}`,
      this.#callerTime ? String(nowMs) : "",
      chatKey === undefined ? "0" : "1",
      String(durationMs),
      this.#freezeChannel,
      chatKey ?? "",
    ];
    await this.#run(FREEZE_SCRIPT, args, "pacing freeze");
  }

  /**
   * Tells `listener` of every freeze any process of this bot records (this one's included), as
   * Redis publishes it: the outbox subscribes, so that a slot reserved ahead goes unused when
   * another process hits a 429 meanwhile. The first call opens one more connection, in
   * subscriber mode, for the store's lifetime. With `reserveAheadMs: 0` there is no reserved
   * slot to hold, so nothing is opened. A freeze published while that connection is down is not
   * heard; the next question to Redis still finds it.
   */
  onFreeze(listener: FreezeListener): () => void {
    if (this.reserveAheadMs === 0 || this.#connection.isClosed) return () => {};
    this.#freezeListeners.add(listener);
    this.#subscriber ??= this.#subscribe();
    return () => {
      this.#freezeListeners.delete(listener);
    };
  }

  snapshot(): RedisPacingStoreSnapshot {
    return Object.freeze({
      granted: this.#granted,
      reserved: this.#reserved,
      denied: this.#denied,
      failures: this.#failures,
      isReachable: this.#isReachable,
    });
  }

  /**
   * Quits the client the store created (a given client is left open) and its subscriber
   * connection. Idempotent.
   */
  async close(): Promise<void> {
    this.#freezeListeners.clear();
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    await Promise.all([
      this.#connection.close(),
      subscriber?.quit().catch(() => subscriber.disconnect()),
    ]);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #subscribe(): Redis {
    const subscriber = this.#connection.client.duplicate();
    // Reconnects (and subscribes again) on its own; errors would otherwise crash the process.
    subscriber.on("error", () => {});
    subscriber.on("message", (channel: string, message: string) => {
      if (channel === this.#freezeChannel) this.#heard(message);
    });
    subscriber.subscribe(this.#freezeChannel).catch(() => {});
    return subscriber;
  }

  #heard(message: string): void {
    const match = FREEZE_MESSAGE.exec(message);
    if (match === null) return;
    const durationMs = Number(match[1] ?? match[2]);
    const chatKey = match[3];
    for (const listener of this.#freezeListeners) {
      // One listener's failure must not keep the others from hearing (the outbox's logs its own).
      try {
        listener(chatKey, durationMs);
      } catch {}
    }
  }

  async #run(
    script: typeof ACQUIRE_SCRIPT,
    args: readonly string[],
    what: string,
  ): Promise<unknown> {
    try {
      const reply = await this.#connection.run(script, args, what);
      this.#isReachable = true;
      return reply;
    } catch (error) {
      this.#failures++;
      this.#isReachable = false;
      throw error;
    }
  }
}

// Telegram's flood limits for one bot as token buckets: one per chat (about 1/s with a short
// burst), one more per group (20/min) and one for the whole bot (about 30/s). A message passes
// only when every bucket it touches has a token; otherwise the caller gets retry_after.

import type { RateLimitOptions } from "./options.js";

/** A token bucket in Telegram milliseconds. */
class TokenBucket {
  #tokens: number;
  #updatedAt: number;

  constructor(
    readonly capacity: number,
    readonly perMs: number,
    now: number,
  ) {
    this.#tokens = capacity;
    this.#updatedAt = now;
  }

  /** Milliseconds until a whole token is available (0 when one is). */
  waitMs(now: number): number {
    this.#refill(now);
    return this.#tokens >= 1 ? 0 : (1 - this.#tokens) / this.perMs;
  }

  take(): void {
    this.#tokens -= 1;
  }

  /** Whether the bucket is full, i.e. forgetting it changes nothing. */
  isFull(now: number): boolean {
    this.#refill(now);
    return this.#tokens >= this.capacity;
  }

  #refill(now: number): void {
    if (now > this.#updatedAt) {
      this.#tokens = Math.min(this.capacity, this.#tokens + (now - this.#updatedAt) * this.perMs);
      this.#updatedAt = now;
    }
  }
}

/** The verdict on one message. */
export type RateDecision =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      /** Seconds as the wire reports them: whole Telegram seconds divided by the time scale. */
      readonly retryAfter: number;
      readonly scope: "chat" | "group" | "global";
    };

const ALLOWED: RateDecision = Object.freeze({ allowed: true });
/** Full buckets are forgotten once this many chats have one, to keep memory bounded. */
const PRUNE_AT = 4096;

/**
 * The flood limits of one bot. `timeScale` maps real clock milliseconds to Telegram
 * milliseconds, so every limit runs `timeScale` times faster and retry_after shrinks with it.
 */
export class RateLimiter {
  readonly #chatBuckets = new Map<string, TokenBucket>();
  readonly #groupBuckets = new Map<string, TokenBucket>();
  #global: TokenBucket | undefined;
  #limits: Readonly<RateLimitOptions> | false;
  readonly #timeScale: number;

  constructor(limits: Readonly<RateLimitOptions> | false, timeScale: number) {
    this.#limits = limits;
    this.#timeScale = timeScale;
  }

  /** The limits in force, or false when off. */
  get limits(): Readonly<RateLimitOptions> | false {
    return this.#limits;
  }

  /** Replaces the limits; buckets start full again. */
  setLimits(limits: Readonly<RateLimitOptions> | false): void {
    this.#limits = limits;
    this.#chatBuckets.clear();
    this.#groupBuckets.clear();
    this.#global = undefined;
  }

  /**
   * Asks to send one message into `chatKey` at real time `nowMs`; consumes a token from every
   * bucket when allowed, and nothing when not.
   */
  tryConsume(
    chatKey: string,
    isGroup: boolean,
    kind: "send" | "edit",
    nowMs: number,
  ): RateDecision {
    const limits = this.#limits;
    if (limits === false || (kind === "edit" && !limits.countEdits)) return ALLOWED;
    const now = nowMs * this.#timeScale;
    this.#global ??= new TokenBucket(limits.globalBurst, limits.globalPerSecond / 1000, now);
    const chat = this.#bucket(
      this.#chatBuckets,
      chatKey,
      limits.perChatBurst,
      limits.perChatPerSecond / 1000,
      now,
    );
    const group = isGroup
      ? this.#bucket(
          this.#groupBuckets,
          chatKey,
          limits.groupBurst,
          limits.groupPerMinute / 60_000,
          now,
        )
      : undefined;
    let waitMs = 0;
    let scope: "chat" | "group" | "global" = "chat";
    const consider = (bucket: TokenBucket | undefined, name: typeof scope): void => {
      if (bucket === undefined) return;
      const wait = bucket.waitMs(now);
      if (wait > waitMs) {
        waitMs = wait;
        scope = name;
      }
    };
    consider(chat, "chat");
    consider(group, "group");
    consider(this.#global, "global");
    if (waitMs > 0) {
      // Telegram reports whole seconds, at least one; a client that waits that long succeeds.
      const telegramSeconds = Math.max(1, Math.ceil(waitMs / 1000));
      return { allowed: false, retryAfter: telegramSeconds / this.#timeScale, scope };
    }
    chat.take();
    group?.take();
    this.#global.take();
    return ALLOWED;
  }

  #bucket(
    map: Map<string, TokenBucket>,
    key: string,
    capacity: number,
    perMs: number,
    now: number,
  ): TokenBucket {
    let bucket = map.get(key);
    if (bucket === undefined) {
      if (map.size >= PRUNE_AT) {
        for (const [other, candidate] of map) if (candidate.isFull(now)) map.delete(other);
      }
      bucket = new TokenBucket(capacity, perMs, now);
      map.set(key, bucket);
    }
    return bucket;
  }
}

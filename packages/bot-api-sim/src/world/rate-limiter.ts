// Telegram's flood limits for one bot: a token bucket per chat (about 1/s with a short burst), a
// sliding window per group (at most 20 in any minute) and a token bucket for the whole bot (about
// 30/s). A message passes only when every limit it touches allows it; else it gets retry_after.
// Drafts (sendMessageDraft) have a bucket of their own per chat and touch no other limit.

import type { RateLimitOptions } from "../options.js";

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

  /** The tokens there are at `now`, fractions included, without changing the bucket. */
  peek(now: number): number {
    if (now <= this.#updatedAt) return this.#tokens;
    return Math.min(this.capacity, this.#tokens + (now - this.#updatedAt) * this.perMs);
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
type RateDecision =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      /** Seconds as the wire reports them: whole Telegram seconds divided by the time scale. */
      readonly retryAfter: number;
      readonly scope: RateScope;
    };

/** Which limit refused a call. */
export type RateScope = "chat" | "group" | "global" | "draft";

/** At most `limit` messages in any window of `windowMs` (Telegram milliseconds). */
class SlidingWindow {
  readonly #times: number[] = [];

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** Milliseconds until one more message fits (0 when it fits now). */
  waitMs(now: number): number {
    this.#forget(now);
    if (this.#times.length < this.limit) return 0;
    return (this.#times[0] as number) + this.windowMs - now;
  }

  take(now: number): void {
    this.#times.push(now);
  }

  /** When the messages still inside the window at `now` were sent, oldest first. */
  sentTimes(now: number): number[] {
    return this.#times.filter((time) => time > now - this.windowMs);
  }

  isEmpty(now: number): boolean {
    this.#forget(now);
    return this.#times.length === 0;
  }

  #forget(now: number): void {
    while (this.#times.length > 0 && (this.#times[0] as number) <= now - this.windowMs)
      this.#times.shift();
  }
}

/** What is left of one token bucket, in real time (the time scale applied). */
export interface BucketBudget {
  /** Messages that fit now; a fraction is a token on its way. */
  readonly available: number;
  /** The most the bucket holds (the burst). */
  readonly capacity: number;
  /** Tokens added per real second. */
  readonly perSecond: number;
}

/** What is left of a group's sliding minute, in real time (the time scale applied). */
export interface WindowBudget {
  /** Messages inside the window now. */
  readonly used: number;
  readonly limit: number;
  /** The window's length in real ms (60 000 at time scale 1). */
  readonly windowMs: number;
  /** Real ms since each message in the window was sent, oldest first. */
  readonly sentAgoMs: readonly number[];
}

/** What Telegram's flood limits leave a bot for one chat right now. */
export interface SendBudget {
  /** The chat's own bucket (sends and, by default, edits). */
  readonly chat: BucketBudget;
  /** Groups and supergroups: the sliding minute. */
  readonly group: WindowBudget | undefined;
  /** The bot's bucket over all chats. */
  readonly global: BucketBudget;
  /** Private chats: the bucket of sendMessageDraft. */
  readonly drafts: BucketBudget | undefined;
}

const ALLOWED: RateDecision = Object.freeze({ allowed: true });
/** Telegram's group limit counts the messages of any 60 s. */
const GROUP_WINDOW_MS = 60_000;
/** Full buckets are forgotten once this many chats have one, to keep memory bounded. */
const PRUNE_AT = 4096;

/**
 * The flood limits of one bot. `timeScale` maps real clock milliseconds to Telegram
 * milliseconds, so every limit runs `timeScale` times faster and retry_after shrinks with it.
 */
export class RateLimiter {
  readonly #chatBuckets = new Map<string, TokenBucket>();
  readonly #draftBuckets = new Map<string, TokenBucket>();
  readonly #groupWindows = new Map<string, SlidingWindow>();
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
    this.#draftBuckets.clear();
    this.#groupWindows.clear();
    this.#global = undefined;
  }

  /**
   * Asks to send one message into `chatKey` at real time `nowMs`; consumes a token from every
   * bucket when allowed, and nothing when not.
   */
  tryConsume(
    chatKey: string,
    isGroup: boolean,
    kind: "send" | "edit" | "draft",
    nowMs: number,
  ): RateDecision {
    const limits = this.#limits;
    if (limits === false || (kind === "edit" && !limits.countEdits)) return ALLOWED;
    const now = nowMs * this.#timeScale;
    if (kind === "draft") {
      const bucket = this.#bucket(
        this.#draftBuckets,
        chatKey,
        limits.draftBurst,
        limits.draftsPerSecond,
        now,
      );
      const waitMs = bucket.waitMs(now);
      if (waitMs > 0) return this.#refusal(waitMs, "draft");
      bucket.take();
      return ALLOWED;
    }
    this.#global ??= new TokenBucket(limits.globalBurst, limits.globalPerSecond / 1000, now);
    const chat = this.#bucket(
      this.#chatBuckets,
      chatKey,
      limits.perChatBurst,
      limits.perChatPerSecond,
      now,
    );
    const group = isGroup ? this.#groupWindow(chatKey, limits, now) : undefined;
    let waitMs = 0;
    let scope: RateScope = "chat";
    const consider = (wait: number, name: typeof scope): void => {
      if (wait > waitMs) {
        waitMs = wait;
        scope = name;
      }
    };
    consider(chat.waitMs(now), "chat");
    if (group !== undefined) consider(group.waitMs(now), "group");
    consider(this.#global.waitMs(now), "global");
    if (waitMs > 0) return this.#refusal(waitMs, scope);
    chat.take();
    group?.take(now);
    this.#global.take();
    return ALLOWED;
  }

  /**
   * What the limits leave for one chat at real time `nowMs`, or false when limits are off.
   * Reading it changes nothing: a chat never sent to has full buckets.
   */
  budget(chatKey: string, isGroup: boolean, nowMs: number): SendBudget | false {
    const limits = this.#limits;
    if (limits === false) return false;
    const scale = this.#timeScale;
    const now = nowMs * scale;
    const bucket = (
      existing: TokenBucket | undefined,
      capacity: number,
      perSecond: number,
    ): BucketBudget =>
      Object.freeze({
        available: existing?.peek(now) ?? capacity,
        capacity,
        perSecond: perSecond * scale,
      });
    const sent = this.#groupWindows.get(chatKey)?.sentTimes(now) ?? [];
    return Object.freeze({
      chat: bucket(this.#chatBuckets.get(chatKey), limits.perChatBurst, limits.perChatPerSecond),
      group: isGroup
        ? Object.freeze({
            used: sent.length,
            limit: limits.groupPerMinute,
            windowMs: GROUP_WINDOW_MS / scale,
            sentAgoMs: Object.freeze(sent.map((time) => (now - time) / scale)),
          })
        : undefined,
      global: bucket(this.#global, limits.globalBurst, limits.globalPerSecond),
      drafts: isGroup
        ? undefined
        : bucket(this.#draftBuckets.get(chatKey), limits.draftBurst, limits.draftsPerSecond),
    });
  }

  #refusal(waitMs: number, scope: RateScope): RateDecision {
    // Telegram reports whole seconds, at least one; a client that waits that long succeeds.
    const telegramSeconds = Math.max(1, Math.ceil(waitMs / 1000));
    return { allowed: false, retryAfter: telegramSeconds / this.#timeScale, scope };
  }

  #bucket(
    buckets: Map<string, TokenBucket>,
    key: string,
    capacity: number,
    perSecond: number,
    now: number,
  ): TokenBucket {
    let bucket = buckets.get(key);
    if (bucket === undefined) {
      if (buckets.size >= PRUNE_AT) {
        for (const [other, candidate] of buckets) {
          if (candidate.isFull(now)) buckets.delete(other);
        }
      }
      bucket = new TokenBucket(capacity, perSecond / 1000, now);
      buckets.set(key, bucket);
    }
    return bucket;
  }

  #groupWindow(key: string, limits: Readonly<RateLimitOptions>, now: number): SlidingWindow {
    let window = this.#groupWindows.get(key);
    if (window === undefined) {
      if (this.#groupWindows.size >= PRUNE_AT) {
        for (const [other, candidate] of this.#groupWindows) {
          if (candidate.isEmpty(now)) this.#groupWindows.delete(other);
        }
      }
      window = new SlidingWindow(limits.groupPerMinute, GROUP_WINDOW_MS);
      this.#groupWindows.set(key, window);
    }
    return window;
  }
}

// Pacing state behind a small interface: per-chat next slot and freeze, a global sliding window and
// a global freeze. In memory by default; a shared store (e.g. Redis + Lua) can implement the same
// two calls when one bot runs in several processes.

/** One request asking for a slot. */
export interface PacingRequest {
  /** The chat's pacing key, or `undefined` for a request that writes to no chat. */
  readonly chatKey: string | undefined;
  /** Minimum milliseconds between two paced requests to the chat; 0 means unpaced. */
  readonly intervalMs: number;
  /** Whether this request takes (and must wait for) a chat slot; false still honours freezes. */
  readonly paced: boolean;
  /** Most requests allowed in any window of `globalWindowMs`; 0 means no global budget. */
  readonly globalLimit: number;
  /** Length of the global window in milliseconds. */
  readonly globalWindowMs: number;
  /** The outbox clock's `now()`. A store shared between processes should use its own time. */
  readonly nowMs: number;
}

/** Why a request must wait: which limit said no. */
export type PacingDenial = "global-frozen" | "chat-frozen" | "chat-paced" | "global-budget";

/** The answer to {@link PacingStore.acquire}. */
export type PacingDecision =
  | { readonly granted: true }
  | { readonly granted: false; readonly waitMs: number; readonly reason: PacingDenial };

/**
 * Where pacing state lives. `acquire` must be atomic: check every limit, and only when all allow
 * it, record the request (chat slot and global window) and grant it. Both calls may return a
 * promise; the outbox asks one question at a time.
 */
export interface PacingStore {
  /** Grants a slot now, or says how long to wait and why. */
  acquire(request: PacingRequest): PacingDecision | Promise<PacingDecision>;
  /**
   * Freezes a chat (every chat when `chatKey` is `undefined`) for `durationMs` from `nowMs`;
   * a shorter freeze never shortens a longer one.
   */
  freeze(chatKey: string | undefined, durationMs: number, nowMs: number): void | Promise<void>;
}

interface ChatState {
  nextAt: number;
  frozenUntil: number;
}

const GRANTED: PacingDecision = Object.freeze({ granted: true });
const MIN_SWEEP = 1024;

/**
 * The in-memory {@link PacingStore}. The global budget is a sliding window (at most `globalLimit`
 * starts in any `globalWindowMs`), so bursts never exceed the limit the way a token bucket's can.
 * Chats whose slot and freeze have both passed are forgotten, so memory follows active chats.
 */
export class MemoryPacingStore implements PacingStore {
  readonly #chats = new Map<string, ChatState>();
  #starts: number[] = [];
  #head = 0;
  #globalFrozenUntil = Number.NEGATIVE_INFINITY;
  #sweepAt = MIN_SWEEP;

  /** Number of chats whose state is remembered. */
  get trackedChats(): number {
    return this.#chats.size;
  }

  acquire(request: PacingRequest): PacingDecision {
    const now = request.nowMs;
    if (this.#globalFrozenUntil > now) {
      return { granted: false, waitMs: this.#globalFrozenUntil - now, reason: "global-frozen" };
    }
    const chat = request.chatKey === undefined ? undefined : this.#chats.get(request.chatKey);
    if (chat !== undefined && chat.frozenUntil > now) {
      return { granted: false, waitMs: chat.frozenUntil - now, reason: "chat-frozen" };
    }
    if (request.paced && chat !== undefined && chat.nextAt > now) {
      return { granted: false, waitMs: chat.nextAt - now, reason: "chat-paced" };
    }
    const globalWait = this.#globalWait(request, now);
    if (globalWait > 0) return { granted: false, waitMs: globalWait, reason: "global-budget" };

    if (request.globalLimit > 0) this.#starts.push(now);
    if (request.chatKey !== undefined && request.paced && request.intervalMs > 0) {
      this.#chatState(request.chatKey).nextAt = now + request.intervalMs;
      this.#sweep(now);
    }
    return GRANTED;
  }

  freeze(chatKey: string | undefined, durationMs: number, nowMs: number): void {
    const until = nowMs + durationMs;
    if (chatKey === undefined) {
      this.#globalFrozenUntil = Math.max(this.#globalFrozenUntil, until);
      return;
    }
    const chat = this.#chatState(chatKey);
    chat.frozenUntil = Math.max(chat.frozenUntil, until);
    this.#sweep(nowMs);
  }

  /** Milliseconds until the window has room, after dropping starts that left it. */
  #globalWait(request: PacingRequest, now: number): number {
    const limit = request.globalLimit;
    if (limit <= 0) return 0;
    const starts = this.#starts;
    const horizon = now - request.globalWindowMs;
    while (this.#head < starts.length && (starts[this.#head] as number) <= horizon) this.#head++;
    if (this.#head > MIN_SWEEP && this.#head * 2 > starts.length) {
      this.#starts = starts.slice(this.#head);
      this.#head = 0;
    }
    const inWindow = this.#starts.length - this.#head;
    if (inWindow < limit) return 0;
    // The start that must leave the window before there is room for one more.
    const blocking = this.#starts[this.#head + inWindow - limit] as number;
    return blocking + request.globalWindowMs - now;
  }

  #chatState(chatKey: string): ChatState {
    let chat = this.#chats.get(chatKey);
    if (chat === undefined) {
      chat = { nextAt: Number.NEGATIVE_INFINITY, frozenUntil: Number.NEGATIVE_INFINITY };
      this.#chats.set(chatKey, chat);
    }
    return chat;
  }

  /** Forgets chats with nothing left to enforce; amortised O(1) per call. */
  #sweep(now: number): void {
    if (this.#chats.size < this.#sweepAt) return;
    for (const [key, chat] of this.#chats) {
      if (chat.nextAt <= now && chat.frozenUntil <= now) this.#chats.delete(key);
    }
    this.#sweepAt = Math.max(MIN_SWEEP, this.#chats.size * 2);
  }
}

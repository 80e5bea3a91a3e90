// Pacing state behind a small interface: per chat a minimum spacing, an optional sliding window
// with a reserve, and a freeze; a global sliding window (and one of its own for paid broadcasts)
// and a global freeze; a global slot may be reserved a little ahead. In memory by default; a
// shared store (e.g. Redis + Lua) can implement the same two calls for a bot in several processes.

import { checkNumber, checkObject, checkOptions, describeValue } from "@telepace/core";

/** One request asking for a slot. */
export interface PacingRequest {
  /** The chat's pacing key, or `undefined` for a request that writes to no chat. */
  readonly chatKey: string | undefined;
  /** Minimum milliseconds between two paced requests to the chat; 0 means no spacing. */
  readonly intervalMs: number;
  /**
   * Most paced requests to the chat in any window of `chatWindowMs`, this one included;
   * 0 means the chat has no window (private chats).
   */
  readonly chatLimit: number;
  /** Length of the chat's window in milliseconds (ignored when `chatLimit` is 0). */
  readonly chatWindowMs: number;
  /**
   * Places of the chat's window this request must leave free for others (the send reserve): it is
   * granted only while fewer than `chatLimit - chatReserve` requests are in the window, and
   * always while none is (a reserve never takes the whole window). 0 for sends.
   */
  readonly chatReserve: number;
  /** Whether this request takes (and must wait for) a chat slot; false still honours freezes. */
  readonly paced: boolean;
  /** Most requests allowed in any window of `globalWindowMs`; 0 means no global budget. */
  readonly globalLimit: number;
  /**
   * Length of the global window in milliseconds. It varies between requests (the outbox's margin
   * follows how long requests take), so a store keeps starts for the longest window it was asked
   * about and counts those inside this request's window.
   */
  readonly globalWindowMs: number;
  /** The outbox clock's `now()`. A store shared between processes should use its own time. */
  readonly nowMs: number;
  /**
   * Whether the request is a paid broadcast: it takes a slot of the paid-broadcast window instead
   * of the global one (`globalLimit` and `globalWindowMs` then describe that window), so paid
   * sends and everything else never count against each other. The global freeze holds both.
   * Absent: false.
   */
  readonly paidBroadcast?: boolean | undefined;
  /**
   * How much later than now the caller can start a grant, in ms (>= 0): when the global window
   * has no room now but will within this, the store reserves that slot (records the start at its
   * time, for the chat too) and answers `{ granted: true, startInMs }`; the caller starts then,
   * not before. Absent or 0: slots are granted for now only, as before reservations existed.
   * Chat spacing, chat windows and freezes are never reserved ahead: they deny as always.
   */
  readonly maxStartInMs?: number | undefined;
}

/**
 * Why a request must wait: which limit said no. `chat-paced` holds every paced request to the
 * chat (spacing, or a full window); `chat-reserved` only requests with a `chatReserve` (edits):
 * what is left of the window is kept for sends.
 */
export type PacingDenial =
  | "global-frozen"
  | "chat-frozen"
  | "chat-paced"
  | "chat-reserved"
  | "global-budget";

/** The answer to {@link PacingStore.acquire}. */
export type PacingDecision =
  | {
      readonly granted: true;
      /**
       * A reservation: the slot starts this many ms after the store's now (0 < it <= the
       * request's `maxStartInMs`), and the caller must not start before. Absent: start now.
       */
      readonly startInMs?: number | undefined;
    }
  | { readonly granted: false; readonly waitMs: number; readonly reason: PacingDenial };

/**
 * Where pacing state lives. `acquire` must be atomic: check every limit, and only when all allow
 * it, record the request (chat spacing, chat window and global window) and grant it. Both calls
 * may return a promise; the outbox asks one question at a time.
 */
export interface PacingStore {
  /**
   * How far ahead, in ms, the outbox asks this store to reserve global slots (`maxStartInMs`):
   * worth it when an answer takes a round trip, so that the slot is taken on the store's
   * timeline, not when the caller's timer and round trip let it ask. Absent or 0: the outbox
   * asks for slots now only.
   */
  readonly reserveAheadMs?: number | undefined;
  /** Grants a slot now (or, when the request allows it, reserves a later one), or says how long to wait and why. */
  acquire(request: PacingRequest): PacingDecision | Promise<PacingDecision>;
  /**
   * Freezes a chat (every chat when `chatKey` is `undefined`) for `durationMs` from `nowMs`;
   * a shorter freeze never shortens a longer one.
   */
  freeze(chatKey: string | undefined, durationMs: number, nowMs: number): void | Promise<void>;
  /**
   * For a store shared by several processes: calls `listener` whenever any of them records a
   * freeze (this one's included), as soon as the store hears of it, with the chat (`undefined`:
   * every chat) and how long from now it lasts, in ms. The outbox subscribes when it is created
   * and unsubscribes when it has closed. It then holds the chat (or everything) as if the 429
   * were its own, so a slot the store reserved ahead goes unused instead of going out into the
   * freeze. Returns the unsubscribe. Absent: the outbox learns of other processes' freezes when
   * it next asks.
   */
  onFreeze?(listener: FreezeListener): () => void;
}

/** What {@link PacingStore.onFreeze} reports: a freeze of `chatKey` (or every chat) for `durationMs` from now. */
export type FreezeListener = (chatKey: string | undefined, durationMs: number) => void;

// Every field of a request once: `satisfies` fails the build when one is added without its name.
const requestFields = Object.keys({
  chatKey: true,
  intervalMs: true,
  chatLimit: true,
  chatWindowMs: true,
  chatReserve: true,
  paced: true,
  globalLimit: true,
  globalWindowMs: true,
  nowMs: true,
  maxStartInMs: true,
  paidBroadcast: true,
} satisfies Record<keyof PacingRequest, true>);

function checkChatKey(chatKey: unknown): void {
  if (chatKey !== undefined && (typeof chatKey !== "string" || chatKey.length === 0)) {
    throw new TypeError(
      `Expected \`chatKey\` to be a non-empty string or undefined, got ${describeValue(chatKey)}`,
    );
  }
}

/**
 * Checks a request whole, as the outbox's options are checked: the outbox's own requests always
 * pass, but a store may be called by other code too.
 */
function checkRequest(request: unknown): PacingRequest {
  const given = checkOptions("request", checkObject("request", request), requestFields);
  checkChatKey(given.chatKey);
  checkNumber("intervalMs", given.intervalMs, { min: 0 });
  checkNumber("chatLimit", given.chatLimit, { integer: true, min: 0 });
  checkNumber("chatWindowMs", given.chatWindowMs, { min: 0 });
  checkNumber("chatReserve", given.chatReserve, { integer: true, min: 0 });
  if (typeof given.paced !== "boolean") {
    throw new TypeError(`Expected \`paced\` to be a boolean, got ${describeValue(given.paced)}`);
  }
  checkNumber("globalLimit", given.globalLimit, { integer: true, min: 0 });
  checkNumber("globalWindowMs", given.globalWindowMs, { min: 0 });
  checkNumber("nowMs", given.nowMs);
  if (given.maxStartInMs !== undefined) checkNumber("maxStartInMs", given.maxStartInMs, { min: 0 });
  if (given.paidBroadcast !== undefined && typeof given.paidBroadcast !== "boolean") {
    throw new TypeError(
      `Expected \`paidBroadcast\` to be a boolean or undefined, got ${describeValue(given.paidBroadcast)}`,
    );
  }
  return request as PacingRequest;
}

interface ChatState {
  nextAt: number;
  frozenUntil: number;
  /** Paced starts still inside the chat's window, oldest first (at most `chatLimit`). */
  starts: number[];
  /** When the newest start leaves the window: until then the chat cannot be forgotten. */
  windowUntil: number;
}

/** The starts of one global sliding window (the global one, or the paid broadcasts'). */
interface GlobalWindow {
  starts: number[];
  head: number;
  /** The longest window asked about: starts inside it are kept. */
  retainMs: number;
}

const GRANTED: PacingDecision = Object.freeze({ granted: true });
const MIN_SWEEP = 1024;

/**
 * Milliseconds from `now` until a sliding window holding `starts` (oldest first, all inside it,
 * none after `now`) has room for one more under `limit`; 0 when it has room now.
 */
function windowWait(
  starts: readonly number[],
  head: number,
  limit: number,
  windowMs: number,
  now: number,
): number {
  const inWindow = starts.length - head;
  if (inWindow < limit) return 0;
  // The start that must leave the window before there is room for one more.
  return (starts[head + inWindow - limit] as number) + windowMs - now;
}

/**
 * Milliseconds until the earliest slot of `window` this request may have, after dropping starts
 * that left the longest window asked about. Slots are handed out in time order: never before the
 * latest start (a reservation), so the window is checked as if asked at the slot's time.
 */
function globalStartIn(window: GlobalWindow, request: PacingRequest, now: number): number {
  const limit = request.globalLimit;
  if (limit <= 0) return 0;
  window.retainMs = Math.max(window.retainMs, request.globalWindowMs);
  const retained = now - window.retainMs;
  while (window.head < window.starts.length && (window.starts[window.head] as number) <= retained)
    window.head++;
  if (window.head > MIN_SWEEP && window.head * 2 > window.starts.length) {
    window.starts = window.starts.slice(window.head);
    window.head = 0;
  }
  const starts = window.starts;
  const at = Math.max(now, starts.at(-1) ?? now);
  // Starts kept for a longer window but outside this one: at most a margin's worth of them.
  const horizon = at - request.globalWindowMs;
  let first = window.head;
  while (first < starts.length && (starts[first] as number) <= horizon) first++;
  return at - now + windowWait(starts, first, limit, request.globalWindowMs, at);
}

/** Options of {@link MemoryPacingStore}. */
export interface MemoryPacingStoreOptions {
  /**
   * The store's {@link PacingStore.reserveAheadMs}: how far ahead the outbox asks it to reserve
   * global slots, in ms (>= 0). One process gains little from it (no round trip to hide); it is
   * here so a wrapper or a test can behave as a shared store would. @defaultValue 0
   */
  readonly reserveAheadMs?: number | undefined;
}

const MEMORY_OPTIONS = Object.keys({
  reserveAheadMs: true,
} satisfies Record<keyof MemoryPacingStoreOptions, true>);

/**
 * The in-memory {@link PacingStore}. Windows are sliding (at most the limit in _any_ window), so
 * bursts never exceed a limit the way a token bucket's can. Chats whose spacing, window and freeze
 * have all passed are forgotten, so memory follows active chats.
 */
export class MemoryPacingStore implements PacingStore {
  readonly reserveAheadMs: number;
  readonly #chats = new Map<string, ChatState>();
  readonly #global: GlobalWindow = { starts: [], head: 0, retainMs: 0 };
  readonly #paid: GlobalWindow = { starts: [], head: 0, retainMs: 0 };
  #globalFrozenUntil = Number.NEGATIVE_INFINITY;
  #sweepAt = MIN_SWEEP;

  /** @throws {TypeError|RangeError} naming the option, when one is malformed or unknown. */
  constructor(options: MemoryPacingStoreOptions = {}) {
    const given = checkOptions("options", options, MEMORY_OPTIONS);
    this.reserveAheadMs =
      given.reserveAheadMs === undefined
        ? 0
        : checkNumber("reserveAheadMs", given.reserveAheadMs, { min: 0 });
  }

  /** Number of chats whose state is remembered. */
  get trackedChats(): number {
    return this.#chats.size;
  }

  /** @throws {TypeError|RangeError} naming the field, when the request is malformed. */
  acquire(request: PacingRequest): PacingDecision {
    checkRequest(request);
    const now = request.nowMs;
    if (this.#globalFrozenUntil > now) {
      return { granted: false, waitMs: this.#globalFrozenUntil - now, reason: "global-frozen" };
    }
    const chat = request.chatKey === undefined ? undefined : this.#chats.get(request.chatKey);
    if (chat !== undefined && chat.frozenUntil > now) {
      return { granted: false, waitMs: chat.frozenUntil - now, reason: "chat-frozen" };
    }
    const windowed = request.paced && request.chatLimit > 0;
    if (request.paced && chat !== undefined) {
      if (windowed) {
        const horizon = now - request.chatWindowMs;
        let expired = 0;
        while (expired < chat.starts.length && (chat.starts[expired] as number) <= horizon)
          expired++;
        if (expired > 0) chat.starts.splice(0, expired);
      }
      const { chatLimit, chatWindowMs } = request;
      const paced = Math.max(
        chat.nextAt - now,
        windowed ? windowWait(chat.starts, 0, chatLimit, chatWindowMs, now) : 0,
      );
      const reserved = windowed
        ? windowWait(
            chat.starts,
            0,
            Math.max(1, chatLimit - request.chatReserve),
            chatWindowMs,
            now,
          )
        : 0;
      if (reserved > paced) return { granted: false, waitMs: reserved, reason: "chat-reserved" };
      if (paced > 0) return { granted: false, waitMs: paced, reason: "chat-paced" };
    }
    const window = request.paidBroadcast === true ? this.#paid : this.#global;
    const startInMs = globalStartIn(window, request, now);
    const aheadMs = request.maxStartInMs ?? 0;
    if (startInMs > aheadMs) {
      return { granted: false, waitMs: startInMs - aheadMs, reason: "global-budget" };
    }

    // A reservation records the start at its own time, so what follows it counts from there.
    const at = now + startInMs;
    if (request.globalLimit > 0) window.starts.push(at);
    if (request.chatKey !== undefined && request.paced && (request.intervalMs > 0 || windowed)) {
      const state = this.#chatState(request.chatKey);
      state.nextAt = at + request.intervalMs;
      if (windowed) {
        state.starts.push(at);
        state.windowUntil = at + request.chatWindowMs;
      }
      this.#sweep(now);
    }
    return startInMs > 0 ? { granted: true, startInMs } : GRANTED;
  }

  /** @throws {TypeError|RangeError} naming the argument, when one is malformed. */
  freeze(chatKey: string | undefined, durationMs: number, nowMs: number): void {
    checkChatKey(chatKey);
    checkNumber("durationMs", durationMs, { min: 0 });
    checkNumber("nowMs", nowMs);
    const until = nowMs + durationMs;
    if (chatKey === undefined) {
      this.#globalFrozenUntil = Math.max(this.#globalFrozenUntil, until);
      return;
    }
    const chat = this.#chatState(chatKey);
    chat.frozenUntil = Math.max(chat.frozenUntil, until);
    this.#sweep(nowMs);
  }

  #chatState(chatKey: string): ChatState {
    let chat = this.#chats.get(chatKey);
    if (chat === undefined) {
      chat = {
        nextAt: Number.NEGATIVE_INFINITY,
        frozenUntil: Number.NEGATIVE_INFINITY,
        starts: [],
        windowUntil: Number.NEGATIVE_INFINITY,
      };
      this.#chats.set(chatKey, chat);
    }
    return chat;
  }

  /** Forgets chats with nothing left to enforce; amortised O(1) per call. */
  #sweep(now: number): void {
    if (this.#chats.size < this.#sweepAt) return;
    for (const [key, chat] of this.#chats) {
      if (chat.nextAt <= now && chat.frozenUntil <= now && chat.windowUntil <= now) {
        this.#chats.delete(key);
      }
    }
    this.#sweepAt = Math.max(MIN_SWEEP, this.#chats.size * 2);
  }
}

// TelegramOutbox: schedules keyed write operations per chat — one pending op per key, order by
// (priority, queued_at), per-chat pacing under a global budget, 429 freezes, typed outcomes.

import {
  abortReason,
  BinaryHeap,
  type Clock,
  checkNumber,
  createDeferred,
  type Deferred,
  type Logger,
  type NumberRule,
  onAbort,
  silentLogger,
  systemClock,
  type Timer,
} from "@telepace/core";
import { type ChatId, chatKeyOf, isGroupChat } from "./chat.js";
import { classifyFailure, type FailureClassifier, type FailureVerdict } from "./classify.js";
import { outboxDefaults } from "./defaults.js";
import { OutboxError, RetryAfterTooLongError } from "./errors.js";
import { publish } from "./events.js";
import { type EnqueueOptions, type OutboxOperation, Priority } from "./operation.js";
import type { OutboxOutcome } from "./outcome.js";
import {
  MemoryPacingStore,
  type PacingDecision,
  type PacingRequest,
  type PacingStore,
} from "./pacing-store.js";
import { RecentDurations } from "./recent-durations.js";
import { retryAfterFrom } from "./retry-after.js";

/** Options of {@link TelegramOutbox}. */
export interface TelegramOutboxOptions {
  /** Time source for pacing, freezes, backoff and the close deadline. @defaultValue systemClock */
  readonly clock?: Clock | undefined;
  /**
   * Requests per second to one private chat (positive chat id). 0 turns per-chat pacing off, as
   * in the seed. Range: >= 0. @defaultValue 1
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
   * exactly the seed's pacing. Range: integer >= 1. @defaultValue 20
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
   * Most requests started in any one-second window (plus `pacingMarginMs`), over all chats.
   * 0 turns the global budget off. Range: integer >= 0. @defaultValue 30
   */
  readonly globalRps?: number | undefined;
  /**
   * Milliseconds added to a group's window, and the most added to the global second: a window
   * spends its whole limit, so without a margin a request that reaches Telegram faster than the
   * one it follows a window later lands inside Telegram's window and earns a 429. The global
   * second gets the longest duration of the requests that may still be in it (a request reaches
   * Telegram before its answer), up to this. Per-chat spacing gets none (Telegram allows a short
   * burst in a chat). Range: >= 0. @defaultValue 100
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

/** Monotonic counters of {@link TelegramOutbox.snapshot}. */
export interface OutboxCounters {
  /** Ops accepted (coalesced ones included). */
  readonly enqueued: number;
  /** Ops that replaced a pending op with the same key. */
  readonly coalesced: number;
  /** Ops settled as superseded (coalesced away or dropped). */
  readonly superseded: number;
  /** Requests started (every attempt counts). */
  readonly executed: number;
  /** Ops delivered (not-modified included). */
  readonly delivered: number;
  /** Ops delivered as "message is not modified". */
  readonly notModified: number;
  /** 429 answers. */
  readonly rateLimited: number;
  /** Attempts requeued after a 429 or a transient failure. */
  readonly retries: number;
  /** Ops settled as failed. */
  readonly failed: number;
  /** Ops settled as closed. */
  readonly closed: number;
  /** Ops rejected at the pending bound. */
  readonly rejected: number;
  /** Ops whose caller aborted them. */
  readonly aborted: number;
}

/** One chat (or chat-less key) with work in the outbox. */
export interface OutboxChatSnapshot {
  /** The chat's pacing key; `undefined` for an op without a chat. */
  readonly chat: string | undefined;
  /** Ops waiting. */
  readonly pending: number;
  /** Ops waiting, by priority. */
  readonly pendingByPriority: Readonly<Record<number, number>>;
  /** Whether a request to the chat is in flight. */
  readonly inFlight: boolean;
  /** Milliseconds until the chat's next paced slot (0: now). */
  readonly nextSlotInMs: number;
  /** Milliseconds the chat stays frozen by a 429 (0: not frozen). */
  readonly frozenForMs: number;
  /** Milliseconds of transient-failure backoff left (0: none). */
  readonly backoffForMs: number;
}

/** A point-in-time view of the outbox; a fresh frozen object per call. */
export interface OutboxSnapshot {
  /** `open`, `closing` (draining) or `closed`. */
  readonly state: "open" | "closing" | "closed";
  /** Ops waiting. */
  readonly pending: number;
  /** Requests in flight. */
  readonly inFlight: number;
  /** Ops waiting, by priority. */
  readonly pendingByPriority: Readonly<Record<number, number>>;
  /** Chats with work, busiest first. */
  readonly chats: readonly OutboxChatSnapshot[];
  /** Milliseconds every chat stays frozen by a chat-less 429 (0: not frozen). */
  readonly globalFrozenForMs: number;
  readonly counters: OutboxCounters;
}

type MutableCounters = { -readonly [K in keyof OutboxCounters]: number };

type NumericOption = {
  [K in keyof TelegramOutboxOptions]-?: NonNullable<TelegramOutboxOptions[K]> extends number
    ? K
    : never;
}[keyof TelegramOutboxOptions];

interface Entry {
  readonly seq: number;
  readonly lane: Lane;
  /** The op's own key; `undefined` for unique ops. */
  readonly key: string | undefined;
  /** Identity within the lane: the key, or a symbol for unique ops. */
  readonly slot: string | symbol;
  readonly queuedAt: number;
  priority: number;
  op: OutboxOperation<unknown>;
  deferred: Deferred<OutboxOutcome<unknown>>;
  unsubscribe: () => void;
  attempts: number;
  state: "pending" | "in-flight" | "settled";
  controller: AbortController | undefined;
  /** When the current attempt started. */
  startedAt: number;
}

interface Lane {
  readonly id: string | symbol;
  readonly chatKey: string | undefined;
  readonly pacing: ChatPacing;
  readonly pending: BinaryHeap<Entry>;
  readonly bySlot: Map<string | symbol, Entry>;
  inFlight: Entry | undefined;
  acquiring: boolean;
  /** Earliest time any op of the lane may be asked for (freeze, backoff); a hint, the store decides. */
  readyAt: number;
  /** Earliest time a paced op of the lane may be asked for. */
  nextAt: number;
  /** Earliest time a paced op that leaves the send reserve may be asked for. */
  reservedUntil: number;
  frozenUntil: number;
  backoffUntil: number;
  transientFailures: number;
  /** Bumped to invalidate the lane's ready ticket. */
  readyVersion: number;
  /** The head (and its priority) the live ready ticket was made for. */
  readyHead: Entry | undefined;
  readyPriority: number;
  /** Bumped to invalidate the lane's waiting ticket. */
  waitVersion: number;
  /** When the live waiting ticket is due, or undefined when there is none. */
  waitingAt: number | undefined;
}

/** How one chat is paced: the spacing, and for groups a sliding window with a send reserve. */
interface ChatPacing {
  readonly intervalMs: number;
  /** Most paced requests in any `windowMs`; 0: no window. */
  readonly windowLimit: number;
  readonly windowMs: number;
  /** Places of the window that ops of edit priority leave free. */
  readonly reserve: number;
}

const UNPACED: ChatPacing = Object.freeze({
  intervalMs: 0,
  windowLimit: 0,
  windowMs: 0,
  reserve: 0,
});

/** A lane ready now, ordered by its best op. */
interface ReadyTicket {
  readonly lane: Lane;
  readonly version: number;
  readonly priority: number;
  readonly queuedAt: number;
  readonly seq: number;
}

/** A lane that may become ready at `at`. */
interface WaitingTicket {
  readonly lane: Lane;
  readonly version: number;
  readonly at: number;
  readonly seq: number;
}

type Attempt =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown };

const byPlace = (
  a: { priority: number; queuedAt: number; seq: number },
  b: { priority: number; queuedAt: number; seq: number },
): number => a.priority - b.priority || a.queuedAt - b.queuedAt || a.seq - b.seq;

const GLOBAL_WINDOW_MS = 1000;

function intervalOf(rps: number): number {
  // Rounded to the microsecond so 20/60 rps is exactly 3000 ms (and 20 of them exactly a minute).
  return rps === 0 ? 0 : Math.round(1_000_000 / rps) / 1000;
}

function errorLabel(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, name } = error as { code?: unknown; name?: unknown };
  if (typeof code === "string") return code;
  return typeof name === "string" ? name : undefined;
}

function isPromiseLike<T>(value: unknown): value is PromiseLike<T> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as PromiseLike<T>).then === "function"
  );
}

/**
 * Schedules Telegram writes: one pending op per key (a newer op replaces the payload and keeps its
 * place), order by (priority, queued_at), pacing per chat under a global budget, a 429 freezing
 * only the chat it came from, and a typed outcome for every op. Transport-agnostic: an op is an
 * `execute(signal)` function.
 *
 * @example
 * const outbox = new TelegramOutbox();
 * const outcome = await outbox.enqueue({
 *   chatId: 42,
 *   key: `edit:${messageId}`,
 *   priority: Priority.edit,
 *   idempotent: true,
 *   execute: (signal) => api.editMessageText({ chat_id: 42, message_id: messageId, text }, signal),
 * });
 * if (outcome.status === "delivered") console.log(outcome.result);
 */
export class TelegramOutbox implements AsyncDisposable {
  readonly #clock: Clock;
  readonly #privatePacing: ChatPacing;
  readonly #groupPacing: ChatPacing;
  readonly #globalLimit: number;
  /** The most margin the global window gets (`pacingMarginMs`); see `#globalMarginMs`. */
  readonly #globalMarginCapMs: number;
  readonly #durations: RecentDurations;
  readonly #maxInFlight: number;
  readonly #maxPending: number;
  readonly #maxPendingPerChat: number;
  readonly #maxRetryAfterMs: number;
  readonly #maxAttempts: number;
  readonly #retryBaseDelayMs: number;
  readonly #retryMaxDelayMs: number;
  readonly #store: PacingStore;
  readonly #classify: FailureClassifier;
  readonly #logger: Logger;

  readonly #lanes = new Map<string | symbol, Lane>();
  readonly #ready = new BinaryHeap<ReadyTicket>(byPlace);
  readonly #waiting = new BinaryHeap<WaitingTicket>((a, b) => a.at - b.at || a.seq - b.seq);
  readonly #inFlight = new Set<Entry>();
  #acquiring = 0;
  #pendingCount = 0;
  #seq = 0;
  #globalReadyAt = Number.NEGATIVE_INFINITY;
  #globalFrozenUntil = Number.NEGATIVE_INFINITY;

  #pumpScheduled = false;
  #pumping = false;
  #timer: Timer | undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  #state: "open" | "closing" | "closed" = "open";
  #drain = true;
  #closeDeferred: Deferred<void> | undefined;
  #closeTimer: Timer | undefined;

  readonly #counters: MutableCounters = {
    enqueued: 0,
    coalesced: 0,
    superseded: 0,
    executed: 0,
    delivered: 0,
    notModified: 0,
    rateLimited: 0,
    retries: 0,
    failed: 0,
    closed: 0,
    rejected: 0,
    aborted: 0,
  };

  /**
   * @throws {TypeError|RangeError} naming the option, when an option is invalid.
   */
  constructor(options: TelegramOutboxOptions = {}) {
    const option = (name: NumericOption, rule: NumberRule): number =>
      checkNumber(name, options[name] ?? outboxDefaults[name], rule);
    const privateIntervalMs = intervalOf(option("privateChatRps", { min: 0 }));
    const groupIntervalMs = intervalOf(option("groupChatRps", { min: 0 }));
    const groupBurst = option("groupBurst", { integer: true, min: 1 });
    const sendReserve = option("sendReserve", { integer: true, min: 0 });
    const marginMs = option("pacingMarginMs", { min: 0 });
    this.#privatePacing = { ...UNPACED, intervalMs: privateIntervalMs };
    this.#groupPacing =
      groupIntervalMs === 0
        ? UNPACED
        : {
            intervalMs: Math.min(privateIntervalMs, groupIntervalMs),
            windowLimit: groupBurst,
            windowMs: groupBurst * groupIntervalMs + marginMs,
            reserve: Math.min(sendReserve, groupBurst - 1),
          };
    this.#globalLimit = option("globalRps", { integer: true, min: 0 });
    this.#globalMarginCapMs = marginMs;
    this.#durations = new RecentDurations(GLOBAL_WINDOW_MS + marginMs);
    this.#maxInFlight = option("maxInFlight", { integer: true, min: 1 });
    this.#maxPending = option("maxPending", { integer: true, min: 1 });
    this.#maxPendingPerChat = option("maxPendingPerChat", { integer: true, min: 1 });
    this.#maxRetryAfterMs = option("maxRetryAfterMs", { min: 0 });
    this.#maxAttempts = option("maxAttempts", { integer: true, min: 1 });
    this.#retryBaseDelayMs = option("retryBaseDelayMs", { min: 0 });
    this.#retryMaxDelayMs = option("retryMaxDelayMs", { min: 0 });
    this.#clock = checkMethods("clock", options.clock, ["now", "setTimer"]) ?? systemClock;
    this.#store =
      checkMethods("pacingStore", options.pacingStore, ["acquire", "freeze"]) ??
      new MemoryPacingStore();
    this.#logger =
      checkMethods("logger", options.logger, ["debug", "info", "warn", "error"]) ?? silentLogger;
    this.#classify = options.classifyFailure ?? classifyFailure;
    if (typeof this.#classify !== "function") {
      throw new TypeError(
        `Expected \`classifyFailure\` to be a function, got ${typeof this.#classify}`,
      );
    }
  }

  /** Longest 429 wait an op sits out (ms); the client's read paths use the same cap. */
  get maxRetryAfterMs(): number {
    return this.#maxRetryAfterMs;
  }

  /** Whether `close()` was called. */
  get isClosed(): boolean {
    return this.#state !== "open";
  }

  /**
   * Queues an op and resolves with its outcome. The promise never rejects for a scheduling reason:
   * after close it resolves `closed`, at the bound `rejected`. It rejects only with the caller's
   * `signal.reason` when aborted.
   *
   * @throws {TypeError|RangeError} synchronously when the op itself is malformed.
   */
  enqueue<T>(op: OutboxOperation<T>, options: EnqueueOptions = {}): Promise<OutboxOutcome<T>> {
    return this.#enqueue(op as OutboxOperation<unknown>, options, false) as Promise<
      OutboxOutcome<T>
    >;
  }

  /**
   * Drops the pending op with this chat and key (outcome `superseded`, reason `dropped`). An op
   * already in flight is not affected. Returns whether one was pending.
   */
  dropPending(chatId: ChatId | undefined, key: string): boolean {
    const chatKey = chatId === undefined ? undefined : chatKeyOf(chatId);
    return this.#drop(chatKey, key);
  }

  /** Live counts, per-chat pacing and freezes, and the counters. */
  snapshot(): OutboxSnapshot {
    const now = this.#clock.now();
    const total: Record<number, number> = {};
    const chats: OutboxChatSnapshot[] = [];
    for (const lane of this.#lanes.values()) {
      const byPriority: Record<number, number> = {};
      for (const entry of lane.pending.values()) {
        byPriority[entry.priority] = (byPriority[entry.priority] ?? 0) + 1;
        total[entry.priority] = (total[entry.priority] ?? 0) + 1;
      }
      chats.push(
        Object.freeze({
          chat: lane.chatKey,
          pending: lane.pending.size,
          pendingByPriority: Object.freeze(byPriority),
          inFlight: lane.inFlight !== undefined,
          nextSlotInMs: Math.max(0, lane.nextAt - now),
          frozenForMs: Math.max(0, lane.frozenUntil - now),
          backoffForMs: Math.max(0, lane.backoffUntil - now),
        }),
      );
    }
    chats.sort((a, b) => b.pending - a.pending);
    return Object.freeze({
      state: this.#state,
      pending: this.#pendingCount,
      inFlight: this.#inFlight.size,
      pendingByPriority: Object.freeze(total),
      chats: Object.freeze(chats),
      globalFrozenForMs: Math.max(0, this.#globalFrozenUntil - now),
      counters: Object.freeze({ ...this.#counters }),
    });
  }

  /**
   * Stops accepting ops and settles everything: with `drain` (default) pending ops keep being
   * sent until none is left or `timeoutMs` passes; without it they settle as `closed` at once.
   * At the deadline what is left settles as `closed` and in-flight requests are aborted.
   * Calling it again returns the same promise.
   */
  close(options: OutboxCloseOptions = {}): Promise<void> {
    if (this.#closeDeferred !== undefined) return this.#closeDeferred.promise;
    const timeoutMs = checkNumber("timeoutMs", options.timeoutMs ?? outboxDefaults.closeTimeoutMs, {
      min: 0,
    });
    const drain = options.drain ?? true;
    if (typeof drain !== "boolean") {
      throw new TypeError(`Expected \`drain\` to be a boolean, got ${String(drain)}`);
    }
    this.#closeDeferred = createDeferred<void>();
    this.#state = "closing";
    this.#drain = drain;
    this.#logger.debug({ drain, timeoutMs, pending: this.#pendingCount }, "outbox closing");
    if (!drain) this.#settleAllPending(this.#closedOutcome);
    this.#closeTimer = this.#clock.setTimer(() => this.#forceClose(), timeoutMs);
    this.#checkIdle();
    this.#schedulePump();
    return this.#closeDeferred.promise;
  }

  /** `close()` with its defaults, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---------------------------------------------------------------- enqueue and coalescing

  #enqueue(
    op: OutboxOperation<unknown>,
    options: EnqueueOptions,
    isFollowUp: boolean,
  ): Promise<OutboxOutcome<unknown>> {
    if (typeof op !== "object" || op === null || typeof op.execute !== "function") {
      throw new TypeError("Expected `op` to be an object with an `execute` function");
    }
    const priority = checkNumber("priority", op.priority ?? 0, { integer: true, min: 0 });
    if (op.key !== undefined && typeof op.key !== "string") {
      throw new TypeError(`Expected \`key\` to be a string, got ${typeof op.key}`);
    }
    for (const name of ["idempotent", "paced"] as const) {
      if (op[name] !== undefined && typeof op[name] !== "boolean") {
        throw new TypeError(`Expected \`${name}\` to be a boolean, got ${typeof op[name]}`);
      }
    }
    if (
      op.supersedes !== undefined &&
      (!Array.isArray(op.supersedes) || op.supersedes.some((key) => typeof key !== "string"))
    ) {
      throw new TypeError("Expected `supersedes` to be an array of strings");
    }
    if (op.followUp !== undefined && typeof op.followUp !== "function") {
      throw new TypeError(`Expected \`followUp\` to be a function, got ${typeof op.followUp}`);
    }
    const chatKey = op.chatId === undefined ? undefined : chatKeyOf(op.chatId);
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(abortReason(signal));

    // While draining, a follow-up of delivered work is still accepted; nothing else is.
    const accepting =
      this.#state === "open" || (this.#state === "closing" && this.#drain && isFollowUp);
    if (!accepting) {
      this.#counters.closed++;
      return Promise.resolve(this.#closedOutcome(0));
    }
    const slot: string | symbol = op.key ?? Symbol("unique");
    const known = this.#lanes.get(laneIdOf(chatKey, slot));
    const existing = known?.bySlot.get(slot);
    if (existing === undefined) {
      const full =
        this.#pendingCount >= this.#maxPending
          ? "maxPending"
          : (known?.pending.size ?? 0) >= this.#maxPendingPerChat
            ? "maxPendingPerChat"
            : undefined;
      if (full !== undefined) {
        this.#counters.rejected++;
        this.#logger.warn({ chat: chatKey, key: op.key, bound: full }, "outbox full: op rejected");
        return Promise.resolve(
          Object.freeze({
            status: "rejected" as const,
            error: new OutboxError("ERR_OUTBOX_FULL", `The outbox is full (${full})`),
          }),
        );
      }
    }
    for (const dropped of op.supersedes ?? []) {
      if (dropped !== op.key) this.#drop(chatKey, dropped);
    }
    // Only now: dropping the chat's last pending op may have forgotten its lane.
    const lane = this.#laneFor(chatKey, slot);
    this.#counters.enqueued++;
    const deferred = createDeferred<OutboxOutcome<unknown>>();
    let entry: Entry;
    if (existing !== undefined) {
      // The seed's coalescing: the newer payload takes the older op's place in line.
      this.#settle(existing, {
        status: "superseded",
        reason: "coalesced",
        attempts: existing.attempts,
      });
      lane.pending.remove(existing);
      existing.op = op;
      existing.priority = priority;
      existing.deferred = deferred;
      existing.attempts = 0;
      existing.state = "pending";
      lane.pending.push(existing);
      entry = existing;
      this.#counters.coalesced++;
      publish("coalesced", () => ({ type: "coalesced", key: op.key, chat: chatKey, priority }));
    } else {
      entry = {
        seq: this.#seq++,
        lane,
        key: op.key,
        slot,
        queuedAt: this.#clock.now(),
        priority,
        op,
        deferred,
        unsubscribe: noop,
        attempts: 0,
        state: "pending",
        controller: undefined,
        startedAt: Number.NEGATIVE_INFINITY,
      };
      lane.pending.push(entry);
      lane.bySlot.set(slot, entry);
      this.#pendingCount++;
      publish("enqueued", () => ({ type: "enqueued", key: op.key, chat: chatKey, priority }));
    }
    entry.unsubscribe = onAbort(signal, () => {
      if (entry.deferred === deferred) this.#abort(entry, abortReason(signal as AbortSignal));
    });
    this.#placeLane(lane);
    return deferred.promise;
  }

  #laneFor(chatKey: string | undefined, slot: string | symbol): Lane {
    const id = laneIdOf(chatKey, slot);
    let lane = this.#lanes.get(id);
    if (lane === undefined) {
      lane = {
        id,
        chatKey,
        pacing:
          chatKey === undefined
            ? UNPACED
            : isGroupChat(chatKey)
              ? this.#groupPacing
              : this.#privatePacing,
        pending: new BinaryHeap<Entry>(byPlace),
        bySlot: new Map(),
        inFlight: undefined,
        acquiring: false,
        readyAt: Number.NEGATIVE_INFINITY,
        nextAt: Number.NEGATIVE_INFINITY,
        reservedUntil: Number.NEGATIVE_INFINITY,
        frozenUntil: Number.NEGATIVE_INFINITY,
        backoffUntil: Number.NEGATIVE_INFINITY,
        transientFailures: 0,
        readyVersion: 0,
        readyHead: undefined,
        readyPriority: 0,
        waitVersion: 0,
        waitingAt: undefined,
      };
      this.#lanes.set(id, lane);
    }
    return lane;
  }

  #drop(chatKey: string | undefined, key: string): boolean {
    const lane = this.#lanes.get(laneIdOf(chatKey, key));
    const entry = lane?.bySlot.get(key);
    if (lane === undefined || entry === undefined) return false;
    this.#removePending(entry);
    this.#settle(entry, { status: "superseded", reason: "dropped", attempts: entry.attempts });
    this.#placeLane(lane);
    return true;
  }

  #removePending(entry: Entry): void {
    const lane = entry.lane;
    lane.pending.remove(entry);
    lane.bySlot.delete(entry.slot);
    this.#pendingCount--;
  }

  #abort(entry: Entry, reason: unknown): void {
    if (entry.state === "settled") return;
    if (entry.state === "pending") {
      this.#removePending(entry);
      this.#placeLane(entry.lane);
    } else {
      entry.controller?.abort(reason);
    }
    entry.state = "settled";
    entry.unsubscribe();
    this.#counters.aborted++;
    publish("settled", () => ({
      type: "settled",
      key: entry.key,
      chat: entry.lane.chatKey,
      status: "aborted",
      attempts: entry.attempts,
      error: undefined,
    }));
    entry.deferred.reject(reason);
    this.#checkIdle();
  }

  // ---------------------------------------------------------------- the scheduler

  /** Puts a lane where the scheduler will look for it, or forgets it when it has no work. */
  #placeLane(lane: Lane): void {
    const head = lane.inFlight !== undefined || lane.acquiring ? undefined : lane.pending.peek();
    if (head === undefined) {
      this.#invalidateReady(lane);
      this.#invalidateWaiting(lane);
      this.#forgetIfIdle(lane);
      return;
    }
    const paced = head.op.paced ?? true;
    const at = Math.max(
      lane.readyAt,
      paced ? lane.nextAt : lane.readyAt,
      paced && reserveOf(lane, head) > 0 ? lane.reservedUntil : lane.readyAt,
    );
    if (at <= this.#clock.now()) {
      this.#invalidateWaiting(lane);
      // Unchanged head: the live ticket is still right, so a burst into one chat adds no tickets.
      if (lane.readyHead === head && lane.readyPriority === head.priority) return;
      this.#invalidateReady(lane);
      lane.readyHead = head;
      lane.readyPriority = head.priority;
      this.#ready.push({
        lane,
        version: lane.readyVersion,
        priority: head.priority,
        queuedAt: head.queuedAt,
        seq: head.seq,
      });
    } else {
      this.#invalidateReady(lane);
      if (lane.waitingAt === at) return;
      this.#invalidateWaiting(lane);
      lane.waitingAt = at;
      this.#waiting.push({ lane, version: lane.waitVersion, at, seq: head.seq });
    }
    this.#schedulePump();
  }

  #invalidateReady(lane: Lane): void {
    lane.readyVersion++;
    lane.readyHead = undefined;
  }

  #invalidateWaiting(lane: Lane): void {
    lane.waitVersion++;
    lane.waitingAt = undefined;
  }

  #forgetIfIdle(lane: Lane): void {
    // The identity check matters: a lane forgotten earlier may have a successor under its id.
    const idle = lane.pending.size === 0 && lane.inFlight === undefined && !lane.acquiring;
    if (idle && this.#lanes.get(lane.id) === lane) this.#lanes.delete(lane.id);
  }

  #schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    // A microtask, so ops enqueued together in one tick are ordered among themselves first.
    queueMicrotask(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  #pump(): void {
    if (this.#pumping || this.#state === "closed") return;
    let now = this.#clock.now();
    for (
      let top = this.#waiting.peek();
      top !== undefined && top.at <= now;
      top = this.#waiting.peek()
    ) {
      this.#waiting.pop();
      if (top.version === top.lane.waitVersion) {
        this.#invalidateWaiting(top.lane);
        this.#placeLane(top.lane);
      }
    }
    while (
      this.#inFlight.size + this.#acquiring < this.#maxInFlight &&
      now >= this.#globalReadyAt
    ) {
      const ticket = this.#ready.pop();
      if (ticket === undefined) break;
      const lane = ticket.lane;
      if (ticket.version !== lane.readyVersion) continue;
      this.#invalidateReady(lane);
      // Each question at the time it is asked. A stale time would spin: the store's wait, counted
      // from it, can be over by the live time #placeLane reads, so the lane is ready again at once
      // and gets the same answer forever.
      now = this.#clock.now();
      const request = this.#pacingRequest(lane, now);
      let decision: PacingDecision | PromiseLike<PacingDecision>;
      try {
        decision = this.#store.acquire(request);
      } catch (error) {
        this.#storeFailed(lane, error);
        break;
      }
      if (isPromiseLike<PacingDecision>(decision)) {
        // A shared store answers asynchronously: one question at a time, the slot held meanwhile.
        lane.acquiring = true;
        this.#acquiring++;
        this.#pumping = true;
        const resume = () => {
          lane.acquiring = false;
          this.#acquiring--;
          this.#pumping = false;
        };
        decision.then(
          (answer) => {
            resume();
            if (this.#state !== "closed") this.#apply(lane, answer, request, this.#clock.now());
            this.#pump();
          },
          (error: unknown) => {
            resume();
            this.#storeFailed(lane, error);
            this.#pump();
          },
        );
        return;
      }
      if (!this.#apply(lane, decision, request, now)) break;
    }
    this.#armTimer(now);
  }

  /**
   * The margin of the global second. A request reaches Telegram somewhere between its start and
   * its answer, so when the start `limit` places later comes a second plus that request's
   * duration after it, the two cannot meet in one Telegram second. The margin is the longest
   * duration among requests that may still be in the window (ended within it, or in flight, by
   * their age), up to `pacingMarginMs`: on a fast link the budget is spent nearly in full, a slow
   * answer widens the window at once, and past the cap the outbox is as careful as a fixed margin.
   */
  #globalMarginMs(now: number): number {
    if (this.#globalMarginCapMs === 0 || this.#globalLimit === 0) return 0;
    let longest = this.#durations.max(now);
    for (const entry of this.#inFlight) longest = Math.max(longest, now - entry.startedAt);
    return Math.min(this.#globalMarginCapMs, longest);
  }

  #pacingRequest(lane: Lane, now: number): PacingRequest {
    const head = lane.pending.peek() as Entry;
    const pacing = lane.pacing;
    return {
      chatKey: lane.chatKey,
      intervalMs: pacing.intervalMs,
      chatLimit: pacing.windowLimit,
      chatWindowMs: pacing.windowMs,
      chatReserve: reserveOf(lane, head),
      paced: head.op.paced ?? true,
      globalLimit: this.#globalLimit,
      globalWindowMs: GLOBAL_WINDOW_MS + this.#globalMarginMs(now),
      nowMs: now,
    };
  }

  /** Acts on the store's answer for a lane; returns false when nothing else may start now. */
  #apply(lane: Lane, decision: PacingDecision, request: PacingRequest, now: number): boolean {
    if (decision.granted) {
      const head = lane.pending.peek();
      // While an asynchronous store answered, a paced op may have overtaken the unpaced one the
      // slot was asked for, or an edit may have become the head of a slot asked for a send: that
      // op must ask for its own slot.
      const fits =
        head !== undefined &&
        (request.paced || !(head.op.paced ?? true)) &&
        request.chatReserve >= reserveOf(lane, head);
      if (fits && lane.inFlight === undefined) this.#start(lane, now);
      else this.#placeLane(lane);
      return true;
    }
    const until = now + decision.waitMs;
    switch (decision.reason) {
      case "chat-paced":
        lane.nextAt = until;
        this.#placeLane(lane);
        return true;
      case "chat-reserved":
        lane.reservedUntil = until;
        this.#placeLane(lane);
        return true;
      case "chat-frozen":
        lane.frozenUntil = until;
        if (decision.waitMs > this.#maxRetryAfterMs) {
          this.#failLane(lane, new RetryAfterTooLongError(decision.waitMs, this.#maxRetryAfterMs));
        } else {
          lane.readyAt = Math.max(lane.readyAt, until);
        }
        this.#placeLane(lane);
        return true;
      case "global-frozen":
        this.#globalFrozenUntil = until;
        if (decision.waitMs > this.#maxRetryAfterMs) {
          const error = new RetryAfterTooLongError(decision.waitMs, this.#maxRetryAfterMs);
          this.#settleAllPending((attempts) => this.#failedOutcome(error, attempts, false));
        } else {
          this.#globalReadyAt = until;
          this.#placeLane(lane);
        }
        return false;
      case "global-budget":
        this.#globalReadyAt = until;
        this.#placeLane(lane);
        return false;
    }
  }

  #storeFailed(lane: Lane, error: unknown): void {
    // Without pacing state nothing may be sent safely: hold everything and ask again later.
    this.#logger.error({ error: errorLabel(error) }, "outbox pacing store failed");
    this.#globalReadyAt = this.#clock.now() + Math.max(this.#retryBaseDelayMs, 1);
    this.#placeLane(lane);
  }

  #armTimer(now: number): void {
    let at = Number.POSITIVE_INFINITY;
    for (let top = this.#waiting.peek(); top !== undefined; top = this.#waiting.peek()) {
      if (top.version === top.lane.waitVersion) {
        at = top.at;
        break;
      }
      this.#waiting.pop();
    }
    for (let top = this.#ready.peek(); top !== undefined; top = this.#ready.peek()) {
      if (top.version === top.lane.readyVersion) {
        if (this.#globalReadyAt > now) at = Math.min(at, this.#globalReadyAt);
        break;
      }
      this.#ready.pop();
    }
    if (at === this.#timerAt) return;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = at;
    if (at === Number.POSITIVE_INFINITY || this.#state === "closed") return;
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      this.#timerAt = Number.POSITIVE_INFINITY;
      this.#pump();
    }, at - now);
  }

  // ---------------------------------------------------------------- running an attempt

  #start(lane: Lane, now: number): void {
    const entry = lane.pending.pop() as Entry;
    lane.bySlot.delete(entry.slot);
    this.#pendingCount--;
    entry.state = "in-flight";
    entry.attempts++;
    entry.startedAt = now;
    lane.inFlight = entry;
    this.#inFlight.add(entry);
    this.#counters.executed++;
    if ((entry.op.paced ?? true) && lane.pacing.intervalMs > 0) {
      lane.nextAt = now + lane.pacing.intervalMs;
    }
    const controller = new AbortController();
    entry.controller = controller;
    publish("started", () => ({
      type: "started",
      key: entry.key,
      chat: lane.chatKey,
      attempt: entry.attempts,
    }));
    let running: Promise<unknown>;
    try {
      running = Promise.resolve(entry.op.execute(controller.signal));
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (value) => this.#finish(entry, { ok: true, value }),
      (error: unknown) => this.#finish(entry, { ok: false, error }),
    );
  }

  #finish(entry: Entry, attempt: Attempt): void {
    const lane = entry.lane;
    lane.inFlight = undefined;
    entry.controller = undefined;
    this.#inFlight.delete(entry);
    const now = this.#clock.now();
    this.#durations.record(now, now - entry.startedAt);
    const returned429 = attempt.ok ? retryAfterFrom(attempt.value) : undefined;
    const outcome: Attempt =
      returned429 === undefined ? attempt : { ok: false, error: returned429 };

    if (outcome.ok) {
      lane.transientFailures = 0;
      if (entry.state !== "settled") this.#deliver(entry, outcome.value);
    } else {
      let verdict: FailureVerdict;
      try {
        verdict = this.#classify(outcome.error, { idempotent: entry.op.idempotent ?? false });
      } catch (classifierError) {
        this.#logger.error({ error: errorLabel(classifierError) }, "classifyFailure threw");
        verdict = { action: "fail", scope: "op", maybeDelivered: false };
      }
      this.#onFailure(entry, outcome.error, verdict, now);
    }
    this.#placeLane(lane);
    // An in-flight slot is free: other ready chats may start even if this one has nothing left.
    this.#schedulePump();
    this.#checkIdle();
  }

  #onFailure(entry: Entry, error: unknown, verdict: FailureVerdict, now: number): void {
    const lane = entry.lane;
    switch (verdict.action) {
      case "rate-limited": {
        this.#rateLimited(entry, error, verdict.retryAfterMs, now);
        return;
      }
      case "not-modified":
        lane.transientFailures = 0;
        if (entry.state !== "settled") {
          this.#settle(entry, {
            status: "delivered",
            result: undefined,
            notModified: true,
            attempts: entry.attempts,
          });
        }
        return;
      case "retry": {
        lane.transientFailures++;
        const delayMs = Math.min(
          this.#retryMaxDelayMs,
          this.#retryBaseDelayMs * 2 ** (lane.transientFailures - 1),
        );
        lane.backoffUntil = now + delayMs;
        lane.readyAt = Math.max(lane.readyAt, lane.backoffUntil);
        if (entry.state === "settled") return;
        this.#requeue(entry, error, "transient", delayMs, verdict.maybeDelivered);
        return;
      }
      case "fail":
        if (entry.state !== "settled") {
          this.#settle(entry, this.#failedOutcome(error, entry.attempts, verdict.maybeDelivered));
        }
        if (verdict.scope === "chat") this.#failLane(lane, error);
        return;
    }
  }

  #rateLimited(entry: Entry, error: unknown, retryAfterMs: number, now: number): void {
    const lane = entry.lane;
    const scope = lane.chatKey === undefined ? "global" : "chat";
    this.#counters.rateLimited++;
    const until = now + retryAfterMs;
    if (scope === "chat") {
      lane.frozenUntil = Math.max(lane.frozenUntil, until);
      lane.readyAt = Math.max(lane.readyAt, until);
    } else {
      this.#globalFrozenUntil = Math.max(this.#globalFrozenUntil, until);
      this.#globalReadyAt = Math.max(this.#globalReadyAt, until);
    }
    this.#freeze(lane.chatKey, retryAfterMs, now);
    publish("rate-limited", () => ({
      type: "rate-limited",
      key: entry.key,
      chat: lane.chatKey,
      retryAfterMs,
      scope,
    }));
    this.#logger.warn(
      { chat: lane.chatKey, key: entry.key, retryAfterMs, scope },
      "rate limited (429)",
    );
    if (entry.state === "settled") return;
    if (retryAfterMs > this.#maxRetryAfterMs) {
      const tooLong = new RetryAfterTooLongError(retryAfterMs, this.#maxRetryAfterMs, {
        cause: error,
      });
      this.#settle(entry, this.#failedOutcome(tooLong, entry.attempts, false));
      // Everything else behind the same freeze would wait just as long.
      if (scope === "chat") this.#failLane(lane, tooLong);
      else this.#settleAllPending((attempts) => this.#failedOutcome(tooLong, attempts, false));
      return;
    }
    this.#requeue(entry, error, "rate-limited", retryAfterMs, false);
  }

  #freeze(chatKey: string | undefined, durationMs: number, now: number): void {
    try {
      const done = this.#store.freeze(chatKey, durationMs, now);
      if (isPromiseLike(done)) {
        done.then(undefined, (error: unknown) =>
          this.#logger.error({ error: errorLabel(error) }, "outbox pacing store freeze failed"),
        );
      }
    } catch (error) {
      this.#logger.error({ error: errorLabel(error) }, "outbox pacing store freeze failed");
    }
  }

  /** Puts a failed attempt back in its place — unless superseded, out of attempts or closing. */
  #requeue(
    entry: Entry,
    error: unknown,
    reason: "rate-limited" | "transient",
    delayMs: number,
    maybeDelivered: boolean,
  ): void {
    const lane = entry.lane;
    if (this.#state === "closed" || (this.#state === "closing" && !this.#drain)) {
      this.#settle(entry, this.#closedOutcome(entry.attempts));
      return;
    }
    if (lane.bySlot.has(entry.slot)) {
      // The seed: a newer op for the key arrived meanwhile, so this payload is not retried.
      this.#settle(entry, { status: "superseded", reason: "coalesced", attempts: entry.attempts });
      return;
    }
    if (entry.attempts >= this.#maxAttempts) {
      this.#settle(entry, this.#failedOutcome(error, entry.attempts, maybeDelivered));
      return;
    }
    entry.state = "pending";
    lane.pending.push(entry);
    lane.bySlot.set(entry.slot, entry);
    this.#pendingCount++;
    this.#counters.retries++;
    publish("retry-scheduled", () => ({
      type: "retry-scheduled",
      key: entry.key,
      chat: lane.chatKey,
      attempt: entry.attempts,
      delayMs,
      reason,
    }));
    this.#logger.debug({ chat: lane.chatKey, key: entry.key, delayMs, reason }, "op requeued");
  }

  #deliver(entry: Entry, result: unknown): void {
    let followUp: Promise<OutboxOutcome<unknown>> | undefined;
    const next = entry.op.followUp;
    if (next !== undefined) {
      try {
        const op = next(result);
        if (op !== undefined) followUp = this.#enqueue(op, {}, true);
      } catch (error) {
        this.#logger.error({ error: errorLabel(error), key: entry.key }, "followUp threw");
        followUp = Promise.resolve(this.#failedOutcome(error, 0, false));
      }
    }
    this.#settle(entry, {
      status: "delivered",
      result,
      notModified: false,
      attempts: entry.attempts,
      ...(followUp === undefined ? {} : { followUp }),
    });
  }

  #failLane(lane: Lane, error: unknown): void {
    for (const entry of [...lane.pending.values()]) {
      this.#removePending(entry);
      this.#settle(entry, this.#failedOutcome(error, entry.attempts, false));
    }
  }

  #settleAllPending(outcomeOf: (attempts: number) => OutboxOutcome<unknown>): void {
    for (const lane of [...this.#lanes.values()]) {
      for (const entry of [...lane.pending.values()]) {
        this.#removePending(entry);
        this.#settle(entry, outcomeOf(entry.attempts));
      }
      this.#placeLane(lane);
    }
  }

  #failedOutcome(
    error: unknown,
    attempts: number,
    maybeDelivered: boolean,
  ): OutboxOutcome<unknown> {
    return { status: "failed", error, attempts, maybeDelivered };
  }

  readonly #closedOutcome = (attempts: number): OutboxOutcome<unknown> =>
    Object.freeze({ status: "closed" as const, attempts });

  #settle(entry: Entry, outcome: OutboxOutcome<unknown>): void {
    if (entry.state === "settled") return;
    entry.state = "settled";
    entry.unsubscribe();
    const counters = this.#counters;
    let error: unknown;
    switch (outcome.status) {
      case "delivered":
        counters.delivered++;
        if (outcome.notModified) counters.notModified++;
        break;
      case "superseded":
        counters.superseded++;
        publish("superseded", () => ({
          type: "superseded",
          key: entry.key,
          chat: entry.lane.chatKey,
          reason: outcome.reason,
        }));
        break;
      case "failed":
        counters.failed++;
        error = outcome.error;
        this.#logger.warn(
          {
            chat: entry.lane.chatKey,
            key: entry.key,
            attempts: outcome.attempts,
            error: errorLabel(error),
            maybeDelivered: outcome.maybeDelivered,
          },
          "op failed",
        );
        break;
      case "closed":
        counters.closed++;
        break;
      case "rejected":
        counters.rejected++;
        break;
    }
    publish("settled", () => ({
      type: "settled",
      key: entry.key,
      chat: entry.lane.chatKey,
      status: outcome.status,
      attempts: entry.attempts,
      error: errorLabel(error),
    }));
    entry.deferred.resolve(Object.freeze(outcome));
  }

  // ---------------------------------------------------------------- closing

  #checkIdle(): void {
    if (this.#state === "closing" && this.#pendingCount === 0 && this.#inFlight.size === 0) {
      this.#finishClose();
    }
  }

  #forceClose(): void {
    this.#closeTimer = undefined;
    if (this.#state !== "closing") return;
    this.#settleAllPending(this.#closedOutcome);
    const reason = new OutboxError(
      "ERR_OUTBOX_CLOSED",
      "The outbox closed (close deadline passed)",
    );
    for (const entry of [...this.#inFlight]) {
      entry.controller?.abort(reason);
      this.#settle(entry, this.#closedOutcome(entry.attempts));
    }
    this.#finishClose();
  }

  #finishClose(): void {
    if (this.#state === "closed") return;
    this.#state = "closed";
    this.#closeTimer?.cancel();
    this.#closeTimer = undefined;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    this.#ready.clear();
    this.#waiting.clear();
    this.#logger.debug({ counters: { ...this.#counters } }, "outbox closed");
    this.#closeDeferred?.resolve();
  }
}

function noop(): void {}

/** Places of the lane's window an op must leave free: the send reserve, for edit priority. */
function reserveOf(lane: Lane, entry: Entry): number {
  return entry.priority >= Priority.edit ? lane.pacing.reserve : 0;
}

/** A chat's lane, or for a chat-less op a lane per key: nothing to pace, but no self-overlap. */
function laneIdOf(chatKey: string | undefined, slot: string | symbol): string | symbol {
  if (chatKey !== undefined) return `chat:${chatKey}`;
  return typeof slot === "string" ? `key:${slot}` : slot;
}

/** Validates an optional object option by the methods it must have. */
function checkMethods<T>(
  name: string,
  value: T | undefined,
  methods: readonly string[],
): T | undefined {
  if (value === undefined) return undefined;
  const isObject = typeof value === "object" && value !== null;
  const missing = isObject
    ? methods.filter((method) => typeof (value as Record<string, unknown>)[method] !== "function")
    : methods;
  if (missing.length > 0) {
    const list = (names: readonly string[]) => names.map((m) => `\`${m}\``).join(", ");
    const got = isObject ? `an object without ${list(missing)}` : String(value);
    throw new TypeError(`Expected \`${name}\` to be an object with ${list(methods)}, got ${got}`);
  }
  return value;
}

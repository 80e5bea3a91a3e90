// TelegramOutbox: schedules keyed write operations per chat — one pending op per key, order by
// (priority, queued_at), per-chat pacing under a global budget, 429 freezes, typed outcomes.

import {
  abortReason,
  createDeferred,
  type Deferred,
  describeValue,
  type Logger,
  onAbort,
  safeLog,
  type Timer,
} from "@telepace/core";
import { AttemptRunner } from "./attempt.js";
import { type ChatId, chatKeyOf } from "./chat.js";
import { OutboxError } from "./errors.js";
import { publish } from "./events.js";
import type { Entry, Lane } from "./lane.js";
import {
  type CheckedOperation,
  checkOperation,
  type EnqueueOptions,
  type OutboxOperation,
} from "./operation.js";
import {
  type OutboxCloseOptions,
  pacingOf,
  type ResolvedOutboxOptions,
  resolveCloseOptions,
  resolveEnqueueSignal,
  resolveOutboxOptions,
  type TelegramOutboxOptions,
} from "./outbox-options.js";
import { createCounters, type OutboxSnapshot, takeSnapshot } from "./outbox-snapshot.js";
import type { OutboxOutcome } from "./outcome.js";
import { PendingOps } from "./pending-ops.js";
import { Scheduler } from "./scheduler.js";
import { closedOutcome, errorLabel, failedOutcome, Settlement } from "./settlement.js";

// The package's index (and the client) name these types by this module.
export type { OutboxCloseOptions, TelegramOutboxOptions } from "./outbox-options.js";
export type {
  OutboxChatSnapshot,
  OutboxCounters,
  OutboxSnapshot,
} from "./outbox-snapshot.js";

function noop(): void {}

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
 *   key: writeKeys.edit(messageId), // or the whole plan: writeOperation(planWrite(…), execute)
 *   priority: Priority.edit,
 *   idempotent: true,
 *   execute: (signal) => api.editMessageText({ chat_id: 42, message_id: messageId, text }, signal),
 * });
 * if (outcome.status === "delivered") console.log(outcome.result);
 */
export class TelegramOutbox implements AsyncDisposable {
  readonly #options: ResolvedOutboxOptions;
  readonly #logger: Logger;
  readonly #counters = createCounters();
  readonly #settlement: Settlement;

  readonly #scheduler: Scheduler;
  readonly #attempts: AttemptRunner;
  readonly #pending: PendingOps;
  #seq = 0;

  #state: "open" | "closing" | "closed" = "open";
  #drain = true;
  #closeDeferred: Deferred<void> | undefined;
  #closeTimer: Timer | undefined;
  /** Ends the subscription to freezes other processes record (a shared pacing store's). */
  readonly #stopHearingFreezes: (() => void) | undefined;

  /**
   * @throws {TypeError} when `options` is not an object, has an unknown key (naming the closest
   * valid one), or an option has the wrong type (`null` included).
   * @throws {RangeError} naming the option, when a number is out of its range.
   */
  constructor(options?: TelegramOutboxOptions) {
    this.#options = resolveOutboxOptions(options);
    this.#logger = this.#options.logger;
    this.#settlement = new Settlement(this.#counters, this.#logger);
    this.#pending = new PendingOps((chatKey) => pacingOf(this.#options, chatKey));
    this.#scheduler = new Scheduler(this.#options, {
      isClosed: () => this.#state === "closed",
      start: (lane, now) => this.#start(lane, now),
      forget: (lane) => this.#pending.forgetIfIdle(lane),
      failLane: (lane, error) => this.#failLane(lane, error),
      failAll: (error) => this.#failAll(error),
      storeFailed: () => {
        this.#counters.pacingStoreFailures++;
      },
    });
    this.#attempts = new AttemptRunner(
      {
        options: this.#options,
        counters: this.#counters,
        pending: this.#pending,
        settlement: this.#settlement,
      },
      {
        isSending: () => this.#state === "open" || (this.#state === "closing" && this.#drain),
        enqueueFollowUp: (op) => this.#enqueue(checkOperation(op), undefined, true),
        failLane: (lane, error) => this.#failLane(lane, error),
        failAll: (error) => this.#failAll(error),
      },
    );
    this.#stopHearingFreezes = this.#options.store.onFreeze?.((chatKey, durationMs) =>
      this.#freezeHeard(chatKey, durationMs),
    );
  }

  /** Longest 429 wait an op sits out (ms); the client's read paths use the same cap. */
  get maxRetryAfterMs(): number {
    return this.#options.maxRetryAfterMs;
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
   * @throws {TypeError|RangeError} synchronously, before anything is queued, when the op or the
   * options are malformed (naming the field or option).
   */
  enqueue<T>(op: OutboxOperation<T>, options?: EnqueueOptions): Promise<OutboxOutcome<T>> {
    const checked = checkOperation(op as OutboxOperation<unknown>);
    const signal = resolveEnqueueSignal(options);
    return this.#enqueue(checked, signal, false) as Promise<OutboxOutcome<T>>;
  }

  /**
   * Drops the pending op with this chat and key (outcome `superseded`, reason `dropped`). An op
   * already in flight is not affected. Returns whether one was pending.
   *
   * @throws {TypeError|RangeError} when `chatId` or `key` is malformed.
   */
  dropPending(chatId: ChatId | undefined, key: string): boolean {
    const chatKey = chatId === undefined ? undefined : chatKeyOf(chatId);
    if (typeof key !== "string") {
      throw new TypeError(`Expected \`key\` to be a string, got ${describeValue(key)}`);
    }
    return this.#drop(chatKey, key);
  }

  /** Live counts, per-chat pacing and freezes, and the counters. */
  snapshot(): OutboxSnapshot {
    return takeSnapshot(
      {
        state: this.#state,
        pending: this.#pending.size,
        inFlight: this.#scheduler.inFlight,
        lanes: this.#pending.lanes(),
        globalFrozenUntil: this.#scheduler.globalFrozenUntil,
        pacingStoreRetryAt: this.#scheduler.storeRetryAt,
        counters: this.#counters,
      },
      this.#options.clock.now(),
    );
  }

  /**
   * Stops accepting ops and settles everything: with `drain` (default) pending ops keep being
   * sent until none is left or `timeoutMs` passes; without it they settle as `closed` at once.
   * At the deadline what is left settles as `closed` and in-flight requests are aborted.
   * Calling it again returns the same promise.
   *
   * @throws {TypeError|RangeError} synchronously, naming the option, when an option is invalid.
   */
  close(options?: OutboxCloseOptions): Promise<void> {
    const { drain, timeoutMs } = resolveCloseOptions(options);
    if (this.#closeDeferred !== undefined) return this.#closeDeferred.promise;
    this.#closeDeferred = createDeferred<void>();
    this.#state = "closing";
    this.#drain = drain;
    safeLog(
      this.#logger,
      "debug",
      { drain, timeoutMs, pending: this.#pending.size },
      "outbox closing",
    );
    if (!drain) this.#settleAllPending(closedOutcome);
    this.#closeTimer = this.#options.clock.setTimer(() => this.#forceClose(), timeoutMs);
    this.#checkIdle();
    this.#scheduler.wake();
    return this.#closeDeferred.promise;
  }

  /** `close()` with its defaults, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---------------------------------------------------------------- enqueue and coalescing

  #enqueue(
    { op, priority, chatKey }: CheckedOperation,
    signal: AbortSignal | undefined,
    isFollowUp: boolean,
  ): Promise<OutboxOutcome<unknown>> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));

    // While draining, a follow-up of delivered work is still accepted; nothing else is.
    const accepting =
      this.#state === "open" || (this.#state === "closing" && this.#drain && isFollowUp);
    if (!accepting) {
      this.#counters.closed++;
      return Promise.resolve(closedOutcome(0));
    }
    const identity: string | symbol = op.key ?? Symbol("unique");
    const known = this.#pending.laneOf(chatKey, identity);
    const existing = known?.byIdentity.get(identity);
    if (existing === undefined) {
      const full =
        this.#pending.size >= this.#options.maxPending
          ? "maxPending"
          : (known?.pending.size ?? 0) >= this.#options.maxPendingPerChat
            ? "maxPendingPerChat"
            : undefined;
      if (full !== undefined) {
        this.#counters.rejected++;
        safeLog(
          this.#logger,
          "warn",
          { chat: chatKey, key: op.key, bound: full },
          "outbox full: op rejected",
        );
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
    const lane = this.#pending.open(chatKey, identity);
    this.#counters.enqueued++;
    const deferred = createDeferred<OutboxOutcome<unknown>>();
    let entry: Entry;
    if (existing !== undefined) {
      // Coalescing: the newer payload takes the older op's place in line.
      this.#settlement.settle(existing, {
        status: "superseded",
        reason: "coalesced",
        attempts: existing.attempts,
      });
      this.#pending.reprioritize(existing, priority);
      existing.op = op;
      existing.deferred = deferred;
      existing.attempts = 0;
      existing.state = "pending";
      entry = existing;
      this.#counters.coalesced++;
      publish("coalesced", () => ({ type: "coalesced", key: op.key, chat: chatKey, priority }));
    } else {
      entry = {
        seq: this.#seq++,
        lane,
        key: op.key,
        identity,
        queuedAt: this.#options.clock.now(),
        priority,
        op,
        deferred,
        unsubscribe: noop,
        attempts: 0,
        state: "pending",
        controller: undefined,
        startedAt: Number.NEGATIVE_INFINITY,
      };
      this.#pending.add(entry);
      publish("enqueued", () => ({ type: "enqueued", key: op.key, chat: chatKey, priority }));
    }
    entry.unsubscribe = onAbort(signal, () => {
      if (entry.deferred === deferred) this.#abort(entry, abortReason(signal as AbortSignal));
    });
    this.#scheduler.place(lane);
    return deferred.promise;
  }

  #drop(chatKey: string | undefined, key: string): boolean {
    const entry = this.#pending.find(chatKey, key);
    if (entry === undefined) return false;
    this.#pending.remove(entry);
    this.#settlement.settle(entry, {
      status: "superseded",
      reason: "dropped",
      attempts: entry.attempts,
    });
    this.#scheduler.place(entry.lane);
    return true;
  }

  #abort(entry: Entry, reason: unknown): void {
    if (entry.state === "settled") return;
    if (entry.state === "pending") {
      this.#pending.remove(entry);
      this.#scheduler.place(entry.lane);
    } else {
      entry.controller?.abort(reason);
    }
    this.#settlement.abort(entry, reason);
    this.#checkIdle();
  }

  // ---------------------------------------------------------------- attempts

  /**
   * Runs the attempt the scheduler granted; its answer is carried out and what the scheduler
   * must know of it handed back, in one go, so whoever awaits the op's outcome sees both.
   */
  #start(lane: Lane, now: number): void {
    void this.#attempts.start(lane, now).then((answer) => {
      this.#scheduler.attemptEnded(this.#attempts.finish(answer));
      this.#checkIdle();
    });
  }

  // ---------------------------------------------------------------- failing and closing

  #failLane(lane: Lane, error: unknown): void {
    for (const entry of [...lane.pending.values()]) {
      this.#pending.remove(entry);
      this.#settlement.settle(entry, failedOutcome(error, entry.attempts, false));
    }
  }

  #failAll(error: unknown): void {
    this.#settleAllPending((attempts) => failedOutcome(error, attempts, false));
  }

  #settleAllPending(outcomeOf: (attempts: number) => OutboxOutcome<unknown>): void {
    for (const lane of [...this.#pending.lanes()]) {
      for (const entry of [...lane.pending.values()]) {
        this.#pending.remove(entry);
        this.#settlement.settle(entry, outcomeOf(entry.attempts));
      }
      this.#scheduler.place(lane);
    }
  }

  #checkIdle(): void {
    if (this.#state === "closing" && this.#pending.size === 0 && this.#scheduler.inFlight === 0) {
      this.#finishClose();
    }
  }

  #forceClose(): void {
    this.#closeTimer = undefined;
    if (this.#state !== "closing") return;
    this.#settleAllPending(closedOutcome);
    const reason = new OutboxError(
      "ERR_OUTBOX_CLOSED",
      "The outbox closed (close deadline passed)",
    );
    for (const lane of [...this.#scheduler.inFlightLanes()]) {
      const entry = lane.inFlight;
      if (entry === undefined) continue;
      entry.controller?.abort(reason);
      this.#settlement.settle(entry, closedOutcome(entry.attempts));
    }
    this.#finishClose();
  }

  #freezeHeard(chatKey: unknown, durationMs: unknown): void {
    if (this.#state === "closed") return;
    const isChatKey = chatKey === undefined || (typeof chatKey === "string" && chatKey !== "");
    if (
      !isChatKey ||
      typeof durationMs !== "number" ||
      !(durationMs >= 0 && durationMs < Infinity)
    ) {
      safeLog(
        this.#logger,
        "warn",
        { chatKey: typeof chatKey, durationMs: typeof durationMs },
        "outbox ignored a malformed freeze its pacing store reported",
      );
      return;
    }
    // A freeze of 0 ms (retry_after 0) is over already: nothing to hold.
    if (durationMs === 0) return;
    const lane = chatKey === undefined ? undefined : this.#pending.laneOf(chatKey, chatKey);
    this.#scheduler.freezeHeard(chatKey, lane, durationMs);
  }

  #finishClose(): void {
    if (this.#state === "closed") return;
    this.#state = "closed";
    this.#closeTimer?.cancel();
    this.#closeTimer = undefined;
    this.#scheduler.stop();
    try {
      this.#stopHearingFreezes?.();
    } catch (error) {
      safeLog(
        this.#logger,
        "error",
        { error: errorLabel(error) },
        "outbox pacing store onFreeze unsubscribe failed",
      );
    }
    safeLog(this.#logger, "debug", { counters: { ...this.#counters } }, "outbox closed");
    this.#closeDeferred?.resolve();
  }
}

// UpdateDispatcher: a FIFO queue per principal, a ready queue of principals ordered by their
// oldest waiting update, processor slots that always take the oldest work, and a bounded, typed
// outcome at every limit.

import type { Update } from "@grammyjs/types";
import { abortReason, type Clock, type LogLevel } from "@telepace/core";
import { UpdateDispatchError } from "../errors.js";
import { AbortSubscriptions } from "./abort-subscriptions.js";
import { channels, isTimed, publish } from "./diagnostics.js";
import { type DispatchKey, dispatchKeyOf, KEY_KINDS, type PrincipalId } from "./dispatch-key.js";
import { grantAccess, type HandOver } from "./dispatcher-access.js";
import type { Entry, Waiter, WaiterGroup } from "./entry.js";
import { IdleWaiters } from "./idle-waiters.js";
import {
  type CloseOptions,
  checkProcessor,
  type DrainOptions,
  type EnqueueOptions,
  type ResolvedOptions,
  resolveDeadlineOptions,
  resolveEnqueueOptions,
  resolveOptions,
  type UpdateDispatcherOptions,
  type UpdateProcessor,
} from "./options.js";
import { type Principal, PrincipalTable } from "./principal-table.js";
import { ProcessorRun, type RunHost } from "./processor-run.js";
import { ReadyQueue } from "./ready-queue.js";
import {
  ACCEPTED,
  ACCEPTED_PROMISE,
  type CloseResult,
  type DrainResult,
  DUPLICATE_PROMISE,
  type EnqueueResult,
  type ProcessOutcome,
  REJECT_REASONS,
  REJECTED,
  type RejectReason,
} from "./results.js";
import { LOG, logUpdate, RunOutcomes } from "./run-outcomes.js";
import { SignalPool } from "./signal-pool.js";
import type { UpdateDispatchSnapshot } from "./snapshot.js";
import { type IdLedger, UNTRACKED_IDS, UpdateLedger } from "./update-ledger.js";

const IDLE: DrainResult = Object.freeze({ status: "idle" });
const DRAIN_TIMED_OUT: DrainResult = Object.freeze({ status: "timed-out" });

function trackedId(update: unknown): number | undefined {
  if (typeof update !== "object" || update === null) return undefined;
  try {
    const id = (update as { readonly update_id?: unknown }).update_id;
    return Number.isSafeInteger(id) ? (id as number) : undefined;
  } catch {
    return undefined; // a throwing getter: dispatch the update untracked rather than throw
  }
}

function zeroCounts<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
}

function inEnqueueOrder(entries: Entry[]): readonly Update[] {
  return Object.freeze(entries.sort((a, b) => a.seq - b.seq).map((entry) => entry.update));
}

/**
 * Dispatches Telegram updates to a processor: updates of one principal (a user in a private chat,
 * a user in a group, a group's own control work, …) run one at a time in arrival order, different
 * principals run in parallel under a global limit, a free processor slot always takes the oldest
 * waiting update, and every queue is bounded with a typed outcome at the bound.
 *
 * @example
 * const dispatcher = new UpdateDispatcher(async (update, signal) => {
 *   await handle(update, { signal });
 * }, { timeoutMs: 30_000, logger });
 *
 * // A poller waits for capacity instead of dropping, and confirms only finished work.
 * for (const update of await getUpdates({ offset })) {
 *   await dispatcher.enqueue(update, { wait: true, signal });
 * }
 * offset = (dispatcher.watermark ?? offset - 1) + 1;
 *
 * const { unstarted } = await dispatcher.close({ timeoutMs: 10_000 });
 */
export class UpdateDispatcher implements AsyncDisposable {
  readonly #processor: UpdateProcessor;
  readonly #options: ResolvedOptions;
  readonly #clock: Clock;
  #ledger: IdLedger;
  readonly #principals: PrincipalTable;
  readonly #ready = new ReadyQueue();
  // Abort listeners of callers' signals: one per signal, however many calls wait under it.
  readonly #callerSignals = new AbortSubscriptions();
  readonly #idle: IdleWaiters;
  readonly #signals: SignalPool;
  readonly #runHost: RunHost<Principal> = {
    ended: (run, outcome) => this.#runEnded(run, outcome),
    settledLate: (run) => {
      this.#abandoned--;
      this.#log("debug", run.entry.updateId, LOG.late);
    },
  };
  readonly #pumpTask = (): void => {
    this.#isPumpScheduled = false;
    this.#pump();
  };
  readonly #queuedByKind = zeroCounts(KEY_KINDS);
  readonly #rejected = zeroCounts(REJECT_REASONS);
  #seq = 0;
  #queued = 0;
  #inFlight = 0;
  #waiting = 0;
  #abandoned = 0;
  #accepted = 0;
  #duplicates = 0;
  #isPumping = false;
  #isPumpScheduled = false;
  #closing: Promise<CloseResult> | undefined;
  #isPastGrace = false;
  readonly #outcomes: RunOutcomes;
  // Runs that ended and can take the next call, at most maxConcurrency. They also keep a run (with
  // its entry and update) alive between batches: with none alive, a full collection drops their
  // hidden classes and the code that runs updates is compiled again (a flood of no-op updates with
  // a collection every 100 ms met 116 such deoptimisations per 300,000 updates with no run kept,
  // 41 with one).
  readonly #spareRuns: ProcessorRun<Principal>[] = [];

  static {
    grantAccess((given) => {
      const dispatcher = given as UpdateDispatcher;
      if (!(#outcomes in dispatcher)) throw new TypeError("Expected an UpdateDispatcher");
      return {
        onFinished: (hook) => {
          dispatcher.#outcomes.onFinished = hook;
        },
        leaveIdsToJournal: () => {
          dispatcher.#ledger = UNTRACKED_IDS;
          dispatcher.#outcomes.ledger = UNTRACKED_IDS;
        },
        handOver: (update, key) => dispatcher.#handOver(update, key),
        roomFor: (keyId) => dispatcher.#roomFor(keyId),
      };
    });
  }

  /**
   * @param processor - called once per accepted update with the update and an `AbortSignal`
   *   that no other running call shares; see {@link UpdateProcessor}.
   * @param options - bounds, timeout, clock and logger; see {@link UpdateDispatcherOptions}.
   * @throws {TypeError | RangeError} when the processor is not a function or an option is
   *   invalid or unknown, naming the option and the value.
   */
  constructor(processor: UpdateProcessor, options?: UpdateDispatcherOptions) {
    this.#processor = checkProcessor(processor);
    this.#options = resolveOptions(options);
    this.#clock = this.#options.clock;
    const { maxActivePrincipals, maxQueuedPerPrincipal, maxWaitingEnqueues } = this.#options;
    this.#principals = new PrincipalTable(maxQueuedPerPrincipal);
    this.#idle = new IdleWaiters(this.#clock, this.#callerSignals);
    this.#signals = new SignalPool(this.#options.maxConcurrency);
    // At least every id that can be open at once, so close() does not forget leftovers.
    const heldLimit = maxWaitingEnqueues + maxActivePrincipals * (maxQueuedPerPrincipal + 1);
    this.#ledger = new UpdateLedger(this.#options.dedupeWindow, heldLimit);
    this.#outcomes = new RunOutcomes(this.#ledger, this.#options.logger, this.#clock);
  }

  /**
   * Offers an update. Resolves `accepted` once it is queued behind its principal's earlier
   * updates, `duplicate` when its `update_id` is already queued, waiting, running or recently
   * finished, or `rejected` with the bound that was reached (or `closed`). Malformed updates and
   * update types newer than this code are accepted under a coarser key; nothing about the update
   * makes this throw or reject.
   *
   * With `wait: true` the call waits for room instead of being rejected at the per-principal or
   * active-principal bound, so a poller applies backpressure instead of dropping updates.
   *
   * @throws {TypeError} synchronously when `options` is malformed or has an unknown key.
   * @returns rejects only with `signal.reason` when the signal aborts before acceptance.
   */
  enqueue(update: Update, options?: EnqueueOptions): Promise<EnqueueResult> {
    const { wait, signal } = resolveEnqueueOptions(options);
    const updateId = trackedId(update);
    if (this.#closing !== undefined) return Promise.resolve(this.#reject(updateId, "closed"));
    if (updateId !== undefined && this.#ledger.isDuplicate(updateId)) {
      this.#duplicates++;
      return DUPLICATE_PROMISE;
    }
    if (signal?.aborted) {
      if (updateId !== undefined) this.#ledger.hold(updateId);
      return Promise.reject(abortReason(signal));
    }
    const key = dispatchKeyOf(update);
    const entry = this.#entryOf(update, updateId, key);
    if (this.#tryAccept(entry)) return ACCEPTED_PROMISE[key.kind];
    return this.#enqueueAtBound(entry, this.#principals.get(key.id), wait, signal);
  }

  #entryOf(update: Update, updateId: number | undefined, key: DispatchKey): Entry {
    return {
      update,
      updateId,
      keyId: key.id,
      keyKind: key.kind,
      seq: this.#seq++,
      enqueuedAt: isTimed() ? this.#clock.now() : Number.NaN,
    };
  }

  /** Queues `entry` when its principal takes it now; false (nothing taken) when it would wait. */
  #tryAccept(entry: Entry): boolean {
    const principal = this.#principals.get(entry.keyId);
    if (principal !== undefined) {
      // Waiters exist only while the queue is full, so room here means nobody is overtaken.
      if (!this.#principals.hasRoom(principal)) return false;
      this.#acceptNew(entry, principal);
      return true;
    }
    if (
      this.#principals.size >= this.#options.maxActivePrincipals ||
      this.#principals.admission(entry.keyId) !== undefined
    ) {
      return false;
    }
    const created = this.#principals.activate(entry.keyId);
    this.#acceptNew(entry, created);
    this.#ready.push(created);
    // Processors run from a microtask, never inside enqueue: a batch enqueued in one tick is
    // served oldest first, and the caller's code never runs a processor re-entrantly.
    this.#schedulePump();
    return true;
  }

  /** The intake's hand-over (see `dispatcher-access.ts`): `enqueue` without a promise, keyed. */
  #handOver(update: Update, key: DispatchKey): HandOver {
    if (this.#closing !== undefined) return "closed";
    const updateId = trackedId(update);
    if (updateId !== undefined && this.#ledger.isDuplicate(updateId)) {
      this.#duplicates++;
      return "duplicate";
    }
    const entry = this.#entryOf(update, updateId, key);
    if (this.#tryAccept(entry)) return "accepted";
    if (this.#principals.get(key.id) !== undefined) return "full";
    if (this.#waiting >= this.#options.maxWaitingEnqueues) return "waiting-full";
    return this.#wait(entry, this.#principals.admissionFor(key.id), undefined);
  }

  /** How many more updates principal `keyId` takes without waiting (see `dispatcher-access.ts`). */
  #roomFor(keyId: PrincipalId): number {
    const capacity = this.#options.maxQueuedPerPrincipal + 1;
    const principal = this.#principals.get(keyId);
    if (principal === undefined) return capacity - (this.#principals.admission(keyId)?.size ?? 0);
    const running = principal.run === undefined ? 0 : 1;
    return capacity - principal.queue.length - running - (principal.waiters?.size ?? 0);
  }

  /**
   * The rest of `enqueue`, apart so the per-update path stays small: the principal's queue is
   * full (`principal` given) or it cannot be activated yet; the call waits or is rejected.
   */
  #enqueueAtBound(
    entry: Entry,
    principal: Principal | undefined,
    wait: boolean,
    signal: AbortSignal | undefined,
  ): Promise<EnqueueResult> {
    if (!wait) {
      const reason = principal === undefined ? "active-principals-full" : "principal-queue-full";
      return Promise.resolve(this.#rejectAtBound(entry, reason));
    }
    if (this.#waiting >= this.#options.maxWaitingEnqueues) {
      return Promise.resolve(this.#rejectAtBound(entry, "waiting-full"));
    }
    const waiters =
      principal === undefined
        ? this.#principals.admissionFor(entry.keyId)
        : this.#principals.waitersOf(principal);
    return this.#wait(entry, waiters, signal);
  }

  /**
   * The safe offset watermark: the highest `update_id` such that every update at or below it that
   * this dispatcher was given has finished (succeeded, failed, threw or timed out) or was rejected
   * at a bound. `undefined` until one has. Confirm to Telegram with `offset = watermark + 1`; a
   * crash then loses no accepted update. Updates withdrawn by an aborted wait or left over by
   * `close()` keep it below them.
   */
  get watermark(): number | undefined {
    return this.#ledger.watermark;
  }

  /** Whether {@link UpdateDispatcher.close} was called. */
  get isClosed(): boolean {
    return this.#closing !== undefined;
  }

  /** A fresh, frozen snapshot of gauges and counters. */
  snapshot(): UpdateDispatchSnapshot {
    return Object.freeze({
      queued: this.#queued,
      queuedByKind: Object.freeze({ ...this.#queuedByKind }),
      activePrincipals: this.#principals.size,
      inFlight: this.#inFlight,
      waiting: this.#waiting,
      abandoned: this.#abandoned,
      watermark: this.#ledger.watermark,
      isClosed: this.#closing !== undefined,
      accepted: this.#accepted,
      duplicates: this.#duplicates,
      succeeded: this.#outcomes.succeeded,
      failed: this.#outcomes.failed,
      timedOut: this.#outcomes.timedOut,
      interrupted: this.#outcomes.interrupted,
      rejected: Object.freeze({ ...this.#rejected }),
    });
  }

  /**
   * Waits until nothing is queued, waiting or running, without closing. Resolves `idle`, or
   * `timed-out` when `timeoutMs` elapses first.
   *
   * @throws {TypeError | RangeError} synchronously for a malformed or unknown option.
   * @returns rejects with `signal.reason` when the signal aborts first.
   */
  drain(options?: DrainOptions): Promise<DrainResult> {
    const { timeoutMs, signal } = resolveDeadlineOptions(options, undefined);
    return this.#idle.wait(this.#isIdle(), timeoutMs, signal).then((ending) => {
      if (ending === "aborted") throw abortReason(signal as AbortSignal);
      return ending === "idle" ? IDLE : DRAIN_TIMED_OUT;
    });
  }

  /**
   * Stops accepting updates and lets accepted ones finish. Calls waiting for capacity resolve
   * `rejected: closed` at once. When everything finished within `timeoutMs`, resolves `drained`;
   * otherwise, at the deadline, the unstarted updates are taken out of their queues, running
   * processors get their signal aborted (`ERR_DISPATCHER_CLOSED`), and it resolves `timed-out`
   * listing both. Calling it again returns the same promise.
   *
   * @throws {TypeError | RangeError} synchronously for a malformed or unknown option.
   */
  close(options?: CloseOptions): Promise<CloseResult> {
    if (this.#closing !== undefined) return this.#closing;
    const { timeoutMs, signal } = resolveDeadlineOptions(options, this.#options.closeTimeoutMs);
    this.#refuse(this.#principals.takeWaiters());
    this.#checkIdle();
    // Nothing starts once the grace period is over, even before #terminate runs.
    const endGrace = (): void => {
      this.#isPastGrace = true;
    };
    this.#closing = this.#idle
      .wait(this.#isIdle(), timeoutMs, signal, endGrace)
      .then((ending) => this.#terminate(ending === "idle"));
    return this.#closing;
  }

  /** `close()` with the `closeTimeoutMs` grace period, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #acceptNew(entry: Entry, principal: Principal): void {
    if (entry.updateId !== undefined) this.#ledger.open(entry.updateId);
    this.#accept(entry, principal);
  }

  #accept(entry: Entry, principal: Principal): void {
    principal.queue.push(entry);
    this.#queued++;
    this.#queuedByKind[entry.keyKind]++;
    this.#accepted++;
    if (channels.accepted.hasSubscribers) {
      channels.accepted.publish(
        Object.freeze({
          type: "accepted",
          updateId: entry.updateId ?? null,
          keyKind: entry.keyKind,
        }),
      );
    }
  }

  #wait(
    entry: Entry,
    waiters: WaiterGroup,
    signal: AbortSignal | undefined,
  ): Promise<EnqueueResult> {
    // A waiting update is open: it holds the watermark and its id is a duplicate if offered again.
    if (entry.updateId !== undefined) this.#ledger.open(entry.updateId);
    this.#waiting++;
    return new Promise<EnqueueResult>((resolve, reject) => {
      const waiter: Waiter = { entry, resolve, unsubscribe: () => {} };
      waiter.unsubscribe = this.#callerSignals.subscribe(signal, () => {
        if (!this.#principals.withdraw(waiter)) return;
        this.#waiting--;
        if (entry.updateId !== undefined) this.#ledger.hold(entry.updateId);
        reject(abortReason(signal as AbortSignal));
        this.#checkIdle();
      });
      waiters.add(waiter);
    });
  }

  /** Moves waiters into the principal's queue while it has room, oldest first. */
  #fill(principal: Principal): void {
    const { waiters } = principal;
    if (waiters === undefined) return;
    for (const waiter of waiters) {
      if (!this.#principals.hasRoom(principal)) return;
      waiters.delete(waiter);
      this.#waiting--;
      waiter.unsubscribe();
      this.#accept(waiter.entry, principal);
      waiter.resolve(ACCEPTED[waiter.entry.keyKind]);
    }
  }

  /** Answers waiting calls `closed`; their updates hold the watermark so a poller fetches them again. */
  #refuse(waiters: readonly Waiter[]): void {
    for (const waiter of waiters) {
      this.#waiting--;
      waiter.unsubscribe();
      const { updateId } = waiter.entry;
      if (updateId !== undefined) this.#ledger.hold(updateId);
      waiter.resolve(this.#reject(updateId, "closed"));
    }
  }

  #rejectAtBound(entry: Entry, reason: RejectReason): EnqueueResult {
    // The caller is told now and owns the update, so it must not hold the watermark back.
    if (entry.updateId !== undefined) this.#ledger.release(entry.updateId);
    return this.#reject(entry.updateId, reason);
  }

  #reject(updateId: number | undefined, reason: RejectReason): EnqueueResult {
    this.#rejected[reason]++;
    this.#log("warn", updateId, LOG.rejected, reason);
    publish("rejected", () => ({ type: "rejected", updateId: updateId ?? null, reason }));
    return REJECTED[reason];
  }

  #schedulePump(): void {
    if (this.#isPumpScheduled || this.#isPumping) return;
    this.#isPumpScheduled = true;
    queueMicrotask(this.#pumpTask);
  }

  /**
   * The slot runners: while a processor slot is free, the ready principal whose head update is
   * oldest starts it. Re-entrant calls (a run that ends synchronously, a processor that enqueues)
   * return at once; the running loop picks up what they made ready.
   */
  #pump(): void {
    if (this.#isPumping) return;
    this.#isPumping = true;
    const { maxConcurrency } = this.#options;
    try {
      while (this.#inFlight < maxConcurrency && !this.#isPastGrace) {
        const principal = this.#ready.pop();
        if (principal === undefined) break;
        this.#start(principal);
      }
    } finally {
      this.#isPumping = false;
    }
  }

  #start(principal: Principal): void {
    const entry = principal.queue.shift() as Entry;
    this.#queued--;
    this.#queuedByKind[entry.keyKind]--;
    this.#inFlight++;
    const startedAt = isTimed() ? this.#clock.now() : Number.NaN;
    // Updates enqueued before anybody listened have no enqueue time: no `started` for them.
    if (channels.started.hasSubscribers && !Number.isNaN(entry.enqueuedAt)) {
      channels.started.publish(
        Object.freeze({
          type: "started",
          updateId: entry.updateId ?? null,
          keyKind: entry.keyKind,
          waitedMs: startedAt - entry.enqueuedAt,
        }),
      );
    }
    const spare = this.#spareRuns.pop();
    let run: ProcessorRun<Principal>;
    if (spare === undefined) {
      run = new ProcessorRun(entry, principal, startedAt, this.#runHost, this.#signals);
    } else {
      spare.assign(entry, principal, startedAt);
      run = spare;
    }
    principal.run = run;
    run.start(this.#processor, this.#options.timeoutMs, this.#clock);
  }

  #runEnded(run: ProcessorRun<Principal>, outcome: ProcessOutcome): void {
    this.#inFlight--;
    const { principal } = run;
    principal.run = undefined;
    if (outcome === "timed-out" || outcome === "interrupted") this.#abandoned++;
    this.#outcomes.record(run.entry, run.startedAt, outcome);
    if (run.isReusable && this.#spareRuns.length < this.#options.maxConcurrency) {
      this.#spareRuns.push(run);
    }
    // close() took the principal's queue back; nothing continues after it gave up.
    if (outcome === "interrupted") return;
    if (principal.queue.length > 0) {
      // Its next update is now next in line and no longer counts against the queue bound.
      this.#fill(principal);
      this.#ready.push(principal);
    } else {
      // Removed in the same synchronous step in which enqueue looks the key up, so no update is
      // ever left on a queue that nobody serves.
      const admitted = this.#principals.retire(principal);
      if (admitted !== undefined) {
        this.#fill(admitted); // an admitted principal has at least one live waiter
        this.#ready.push(admitted);
      }
    }
    this.#pump();
    this.#checkIdle();
  }

  /** Ends the grace period of close(): hands back what did not start, aborts what still runs. */
  #terminate(isDrained: boolean): CloseResult {
    this.#ready.clear();
    const unstarted: Entry[] = [];
    const runs: ProcessorRun<Principal>[] = [];
    for (const principal of this.#principals.takeAll()) {
      unstarted.push(...principal.queue);
      principal.queue.length = 0;
      if (principal.run !== undefined) runs.push(principal.run);
    }
    for (const entry of unstarted) {
      if (entry.updateId !== undefined) this.#ledger.hold(entry.updateId);
    }
    this.#queued = 0;
    for (const kind of KEY_KINDS) this.#queuedByKind[kind] = 0;
    const reason = new UpdateDispatchError(
      "ERR_DISPATCHER_CLOSED",
      "The dispatcher closed before the update finished",
    );
    // Every run ends as interrupted before any signal aborts, so a processor that settles at
    // once on abort counts as a late result, not as a failure.
    for (const run of runs) run.interrupt();
    for (const run of runs) run.abort(reason);
    this.#checkIdle();
    return Object.freeze({
      status: isDrained ? "drained" : "timed-out",
      unstarted: inEnqueueOrder(unstarted),
      interrupted: inEnqueueOrder(runs.map((run) => run.entry)),
    });
  }

  #isIdle(): boolean {
    return this.#queued === 0 && this.#inFlight === 0 && this.#waiting === 0;
  }

  #checkIdle(): void {
    if (!this.#idle.isEmpty && this.#isIdle()) this.#idle.notify();
  }

  #log(level: LogLevel, updateId: number | undefined, message: string, reason?: RejectReason) {
    logUpdate(this.#options.logger, level, updateId, message, reason);
  }
}

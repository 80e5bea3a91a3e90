// UpdateDispatcher: one FIFO queue and one worker per principal, a global limit on running
// processors, and a bounded, typed outcome at every limit.

import type { Update } from "@grammyjs/types";
import {
  abortReason,
  type Clock,
  type LogLevel,
  Semaphore,
  type SemaphorePermit,
  safeLog,
  type Timer,
} from "@telepace/core";
import { AbortSubscriptions } from "./abort-subscriptions.js";
import { publish } from "./diagnostics.js";
import { dispatchKeyOf, KEY_KINDS, type KeyKind } from "./dispatch-key.js";
import { UpdateDispatchError } from "./errors.js";
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
import {
  ACCEPTED,
  type CloseResult,
  type DrainResult,
  DUPLICATE,
  type EnqueueResult,
  type ProcessOutcome,
  REJECT_REASONS,
  REJECTED,
  type RejectReason,
} from "./results.js";
import type { UpdateDispatchSnapshot } from "./snapshot.js";
import { UpdateLedger } from "./update-ledger.js";

/** One accepted (or waiting) update. */
interface Entry {
  readonly update: Update;
  /** The update_id when it is a safe integer; other updates are dispatched but not tracked. */
  readonly updateId: number | undefined;
  readonly keyId: string;
  readonly keyKind: KeyKind;
  /** Enqueue order, so leftovers can be handed back in an order that keeps per-key order. */
  readonly seq: number;
  readonly enqueuedAt: number;
}

/** An `enqueue(…, { wait: true })` call waiting for capacity. */
interface Waiter {
  readonly entry: Entry;
  readonly resolve: (result: EnqueueResult) => void;
  unsubscribe: () => void;
}

/** An active principal: its queue, its worker's current update, and calls waiting for room. */
interface Principal {
  readonly id: string;
  readonly queue: Entry[];
  /** Non-empty only while the queue is full, so a waiter is never overtaken by a later call. */
  readonly waiters: Waiter[];
  /** Taken off the queue by the worker and waiting for a processor slot. */
  head: Entry | undefined;
}

/** A processor call in progress. `end` reports whether this call decided the outcome. */
interface Run {
  readonly entry: Entry;
  readonly controller: AbortController;
  readonly end: (outcome: ProcessOutcome) => boolean;
}

type IdleEnding = "idle" | "deadline" | "aborted";

// Fixed log text: the error and the update are never formatted into a log line.
const LOG = Object.freeze({
  failed: "Telegram update failed locally; later work will continue",
  threw: "Telegram update processor threw synchronously; later work will continue",
  timedOut: "Telegram update timed out; its signal was aborted and later work will continue",
  interrupted: "Telegram update was interrupted by close; its signal was aborted",
  late: "Telegram update settled after the dispatcher gave up on it; the result was ignored",
  rejected: "Telegram update was not accepted for dispatch",
});

const IDLE: DrainResult = Object.freeze({ status: "idle" });
const DRAIN_TIMED_OUT: DrainResult = Object.freeze({ status: "timed-out" });

function noop(): void {}

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
 * principals run in parallel under a global limit, and every queue is bounded with a typed outcome
 * at the bound.
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
  readonly #slots: Semaphore;
  readonly #ledger: UpdateLedger;
  readonly #principals = new Map<string, Principal>();
  // Principals waiting for an active slot, with the calls that wait for them. Insertion-ordered:
  // the first entry is the principal that has waited longest.
  readonly #admissions = new Map<string, Waiter[]>();
  readonly #runs = new Set<Run>();
  readonly #idleListeners = new Set<() => void>();
  // Abort listeners of callers' signals: one per signal, however many calls wait under it.
  readonly #callerSignals = new AbortSubscriptions();
  readonly #queuedByKind = zeroCounts(KEY_KINDS);
  readonly #rejected = zeroCounts(REJECT_REASONS);
  #seq = 0;
  #queued = 0;
  #waiting = 0;
  #abandoned = 0;
  #accepted = 0;
  #duplicates = 0;
  #succeeded = 0;
  #failed = 0;
  #timedOut = 0;
  #interrupted = 0;
  #closing: Promise<CloseResult> | undefined;
  #isTerminated = false;

  /**
   * @param processor - called once per accepted update with the update and an `AbortSignal`.
   * @param options - bounds, timeout, clock and logger; see {@link UpdateDispatcherOptions}.
   * @throws {TypeError | RangeError} when the processor is not a function or an option is
   *   invalid, naming the option and the value.
   */
  constructor(processor: UpdateProcessor, options?: UpdateDispatcherOptions) {
    this.#processor = checkProcessor(processor);
    this.#options = resolveOptions(options);
    this.#clock = this.#options.clock;
    this.#slots = new Semaphore(this.#options.maxConcurrency);
    const { maxActivePrincipals, maxQueuedPerPrincipal, maxWaitingEnqueues } = this.#options;
    // At least every id that can be open at once, so close() does not forget leftovers.
    const heldLimit = maxWaitingEnqueues + maxActivePrincipals * (maxQueuedPerPrincipal + 1);
    this.#ledger = new UpdateLedger(this.#options.dedupeWindow, heldLimit);
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
   * @throws {TypeError} synchronously when `options` is malformed.
   * @returns rejects only with `signal.reason` when the signal aborts before acceptance.
   */
  enqueue(update: Update, options?: EnqueueOptions): Promise<EnqueueResult> {
    const { wait, signal } = resolveEnqueueOptions(options);
    const updateId = trackedId(update);
    if (this.#closing !== undefined) return Promise.resolve(this.#reject(updateId, "closed"));
    if (updateId !== undefined && this.#ledger.isDuplicate(updateId)) {
      this.#duplicates++;
      return Promise.resolve(DUPLICATE);
    }
    if (signal?.aborted) {
      if (updateId !== undefined) this.#ledger.hold(updateId);
      return Promise.reject(abortReason(signal));
    }
    const key = dispatchKeyOf(update);
    const entry: Entry = {
      update,
      updateId,
      keyId: key.id,
      keyKind: key.kind,
      seq: this.#seq++,
      enqueuedAt: this.#clock.now(),
    };
    const { maxQueuedPerPrincipal, maxActivePrincipals, maxWaitingEnqueues } = this.#options;
    const principal = this.#principals.get(key.id);
    const admission = principal === undefined ? this.#admissions.get(key.id) : undefined;
    if (principal !== undefined) {
      // Waiters exist only while the queue is full, so room here means nobody is overtaken.
      if (principal.queue.length < maxQueuedPerPrincipal) {
        this.#acceptNew(entry, principal);
        return Promise.resolve(ACCEPTED[key.kind]);
      }
      if (!wait) return Promise.resolve(this.#rejectAtBound(entry, "principal-queue-full"));
    } else if (admission === undefined && this.#principals.size < maxActivePrincipals) {
      const created = this.#activate(key.id, []);
      this.#acceptNew(entry, created);
      void this.#work(created);
      return Promise.resolve(ACCEPTED[key.kind]);
    } else if (!wait) {
      return Promise.resolve(this.#rejectAtBound(entry, "active-principals-full"));
    }
    if (this.#waiting >= maxWaitingEnqueues) {
      return Promise.resolve(this.#rejectAtBound(entry, "waiting-full"));
    }
    let waiters = principal?.waiters ?? admission;
    if (waiters === undefined) {
      waiters = [];
      this.#admissions.set(key.id, waiters);
    }
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
      inFlight: this.#runs.size,
      waiting: this.#waiting,
      abandoned: this.#abandoned,
      watermark: this.#ledger.watermark,
      isClosed: this.#closing !== undefined,
      accepted: this.#accepted,
      duplicates: this.#duplicates,
      succeeded: this.#succeeded,
      failed: this.#failed,
      timedOut: this.#timedOut,
      interrupted: this.#interrupted,
      rejected: Object.freeze({ ...this.#rejected }),
    });
  }

  /**
   * The snapshot under its name of earlier releases.
   * @deprecated Use {@link UpdateDispatcher.snapshot}; `stats()` goes away in the next minor
   *   release.
   */
  stats(): UpdateDispatchSnapshot {
    return this.snapshot();
  }

  /**
   * Waits until nothing is queued, waiting or running, without closing. Resolves `idle`, or
   * `timed-out` when `timeoutMs` elapses first.
   *
   * @throws {TypeError | RangeError} synchronously for a malformed option.
   * @returns rejects with `signal.reason` when the signal aborts first.
   */
  drain(options?: DrainOptions): Promise<DrainResult> {
    const { timeoutMs, signal } = resolveDeadlineOptions(options, undefined);
    return this.#untilIdle(timeoutMs, signal).then((ending) => {
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
   * @throws {TypeError | RangeError} synchronously for a malformed option.
   */
  close(options?: CloseOptions): Promise<CloseResult> {
    if (this.#closing !== undefined) return this.#closing;
    const { timeoutMs, signal } = resolveDeadlineOptions(options, this.#options.closeTimeoutMs);
    for (const principal of this.#principals.values()) this.#refuse(principal.waiters);
    for (const waiters of this.#admissions.values()) this.#refuse(waiters);
    this.#admissions.clear();
    this.#checkIdle();
    this.#closing = this.#untilIdle(timeoutMs, signal).then((ending) =>
      this.#terminate(ending === "idle"),
    );
    return this.#closing;
  }

  /** `close()` with the `closeTimeoutMs` grace period, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #activate(id: string, waiters: Waiter[]): Principal {
    const principal: Principal = { id, queue: [], waiters, head: undefined };
    this.#principals.set(id, principal);
    return principal;
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
    publish("accepted", () => ({
      type: "accepted",
      updateId: entry.updateId ?? null,
      keyKind: entry.keyKind,
    }));
  }

  #wait(entry: Entry, waiters: Waiter[], signal: AbortSignal | undefined): Promise<EnqueueResult> {
    // A waiting update is open: it holds the watermark and its id is a duplicate if offered again.
    if (entry.updateId !== undefined) this.#ledger.open(entry.updateId);
    this.#waiting++;
    return new Promise<EnqueueResult>((resolve, reject) => {
      const waiter: Waiter = { entry, resolve, unsubscribe: noop };
      waiter.unsubscribe = this.#callerSignals.subscribe(signal, () => {
        if (!this.#withdraw(waiter)) return;
        if (entry.updateId !== undefined) this.#ledger.hold(entry.updateId);
        reject(abortReason(signal as AbortSignal));
        this.#checkIdle();
      });
      waiters.push(waiter);
    });
  }

  /** Removes a waiter wherever it waits; false when it is no longer waiting. */
  #withdraw(waiter: Waiter): boolean {
    const { keyId } = waiter.entry;
    const principal = this.#principals.get(keyId);
    const waiters = principal?.waiters ?? this.#admissions.get(keyId);
    const index = waiters === undefined ? -1 : waiters.indexOf(waiter);
    if (waiters === undefined || index < 0) return false;
    waiters.splice(index, 1);
    this.#waiting--;
    if (principal === undefined && waiters.length === 0) this.#admissions.delete(keyId);
    return true;
  }

  /** Moves waiters into the principal's queue while it has room, oldest first. */
  #fill(principal: Principal): void {
    const limit = this.#options.maxQueuedPerPrincipal;
    while (principal.queue.length < limit) {
      const waiter = principal.waiters.shift();
      if (waiter === undefined) return;
      this.#waiting--;
      waiter.unsubscribe();
      this.#accept(waiter.entry, principal);
      waiter.resolve(ACCEPTED[waiter.entry.keyKind]);
    }
  }

  /** Answers waiting calls `closed`; their updates hold the watermark so a poller fetches them again. */
  #refuse(waiters: Waiter[]): void {
    for (const waiter of waiters.splice(0)) {
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

  /** The principal's worker: one update at a time, in order, until the queue is empty. */
  async #work(principal: Principal): Promise<void> {
    for (;;) {
      const entry = principal.queue.shift();
      // Checked and removed in the same synchronous step as enqueue's lookup, so an update can
      // never be pushed onto a queue whose worker has already left.
      if (entry === undefined) return this.#retire(principal);
      this.#fill(principal);
      principal.head = entry;
      let permit: SemaphorePermit;
      try {
        permit = await this.#slots.acquire();
      } catch {
        return; // the slots close only when close() gives up; it took the head back
      }
      if (this.#isTerminated) return permit.release();
      principal.head = undefined;
      const outcome = await this.#process(entry);
      permit.release();
      if (outcome === "interrupted") return;
    }
  }

  #retire(principal: Principal): void {
    this.#principals.delete(principal.id);
    const oldest = this.#admissions.entries().next();
    if (!oldest.done) {
      const [id, waiters] = oldest.value;
      this.#admissions.delete(id);
      const admitted = this.#activate(id, waiters);
      this.#fill(admitted);
      void this.#work(admitted);
    }
    this.#checkIdle();
  }

  #process(entry: Entry): Promise<ProcessOutcome> {
    this.#queued--;
    this.#queuedByKind[entry.keyKind]--;
    const startedAt = this.#clock.now();
    publish("started", () => ({
      type: "started",
      updateId: entry.updateId ?? null,
      keyKind: entry.keyKind,
      waitedMs: startedAt - entry.enqueuedAt,
    }));
    const { timeoutMs } = this.#options;
    // Every call has a signal of its own: listeners a processor leaves on it go with the call.
    const controller = new AbortController();
    const signal = controller.signal;
    const processor = this.#processor;
    return new Promise<ProcessOutcome>((resolve) => {
      let timer: Timer | undefined;
      let hasEnded = false;
      const run: Run = {
        entry,
        controller,
        end: (outcome) => {
          if (hasEnded) return false;
          hasEnded = true;
          timer?.cancel();
          this.#runs.delete(run);
          this.#record(entry, outcome, startedAt);
          resolve(outcome);
          return true;
        },
      };
      this.#runs.add(run);
      let result: unknown;
      try {
        result = processor(entry.update, signal);
      } catch {
        run.end("threw");
        return;
      }
      try {
        // Promise.resolve adopts thenables and turns a throwing `then` into a rejection; it throws
        // itself for a native promise whose `constructor` getter throws, so it stays in the try.
        Promise.resolve(result).then(
          () => run.end("succeeded") || this.#settledLate(entry),
          () => run.end("failed") || this.#settledLate(entry),
        );
      } catch {
        run.end("failed");
        return;
      }
      if (timeoutMs !== undefined) {
        timer = this.#clock.setTimer(() => {
          if (!run.end("timed-out")) return;
          this.#abandoned++;
          controller.abort(
            new UpdateDispatchError(
              "ERR_UPDATE_TIMEOUT",
              `Processing the update took longer than timeoutMs (${timeoutMs} ms)`,
            ),
          );
        }, timeoutMs);
      }
    });
  }

  #record(entry: Entry, outcome: ProcessOutcome, startedAt: number): void {
    const { updateId } = entry;
    switch (outcome) {
      case "succeeded":
        this.#succeeded++;
        break;
      case "failed":
        this.#failed++;
        this.#log("warn", updateId, LOG.failed);
        break;
      case "threw":
        this.#failed++;
        this.#log("error", updateId, LOG.threw);
        break;
      case "timed-out":
        this.#timedOut++;
        this.#log("warn", updateId, LOG.timedOut);
        break;
      case "interrupted":
        this.#interrupted++;
        this.#log("warn", updateId, LOG.interrupted);
        break;
    }
    if (updateId !== undefined) {
      if (outcome === "interrupted") this.#ledger.hold(updateId);
      else this.#ledger.finish(updateId);
    }
    publish("finished", () => ({
      type: "finished",
      updateId: updateId ?? null,
      keyKind: entry.keyKind,
      outcome,
      durationMs: this.#clock.now() - startedAt,
    }));
  }

  #settledLate(entry: Entry): void {
    this.#abandoned--;
    this.#log("debug", entry.updateId, LOG.late);
  }

  /** Ends the grace period of close(): hands back what did not start, aborts what still runs. */
  #terminate(isDrained: boolean): CloseResult {
    this.#isTerminated = true;
    const unstarted: Entry[] = [];
    for (const principal of this.#principals.values()) {
      if (principal.head !== undefined) unstarted.push(principal.head);
      unstarted.push(...principal.queue);
      principal.head = undefined;
      principal.queue.length = 0;
    }
    this.#principals.clear();
    for (const entry of unstarted) {
      if (entry.updateId !== undefined) this.#ledger.hold(entry.updateId);
    }
    this.#queued = 0;
    for (const kind of KEY_KINDS) this.#queuedByKind[kind] = 0;
    const reason = new UpdateDispatchError(
      "ERR_DISPATCHER_CLOSED",
      "The dispatcher closed before the update finished",
    );
    this.#slots.close(reason);
    const runs = [...this.#runs];
    for (const run of runs) {
      if (run.end("interrupted")) this.#abandoned++;
    }
    for (const run of runs) run.controller.abort(reason);
    this.#checkIdle();
    return Object.freeze({
      status: isDrained ? "drained" : "timed-out",
      unstarted: inEnqueueOrder(unstarted),
      interrupted: inEnqueueOrder(runs.map((run) => run.entry)),
    });
  }

  #isIdle(): boolean {
    return this.#queued === 0 && this.#runs.size === 0 && this.#waiting === 0;
  }

  #checkIdle(): void {
    if (this.#idleListeners.size === 0 || !this.#isIdle()) return;
    for (const listener of [...this.#idleListeners]) listener();
  }

  #untilIdle(timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<IdleEnding> {
    if (this.#isIdle()) return Promise.resolve("idle");
    if (signal?.aborted) return Promise.resolve("aborted");
    if (timeoutMs === 0) return Promise.resolve("deadline");
    return new Promise<IdleEnding>((resolve) => {
      let timer: Timer | undefined;
      let unsubscribe = noop;
      const end = (ending: IdleEnding): void => {
        this.#idleListeners.delete(onIdle);
        timer?.cancel();
        unsubscribe();
        resolve(ending);
      };
      const onIdle = (): void => end("idle");
      this.#idleListeners.add(onIdle);
      unsubscribe = this.#callerSignals.subscribe(signal, () => end("aborted"));
      if (timeoutMs !== undefined) timer = this.#clock.setTimer(() => end("deadline"), timeoutMs);
    });
  }

  #log(
    level: LogLevel,
    updateId: number | undefined,
    message: string,
    reason?: RejectReason,
  ): void {
    const fields =
      reason === undefined
        ? { updateId: updateId ?? null }
        : { updateId: updateId ?? null, reason };
    safeLog(this.#options.logger, level, fields, message);
  }
}

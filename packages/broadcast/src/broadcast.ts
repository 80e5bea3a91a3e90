// One broadcast as this process runs it: claims batches from the store, reads their recipients,
// hands each send to the outbox (recorded as started before its request goes out, its outcome
// after), completes batches, renews their leases, and answers pause, resume and cancel. At most
// `maxQueued` sends are in the outbox at once, so memory does not grow with the recipients.

import {
  type Clock,
  createDeferred,
  type Logger,
  onAbort,
  safeLog,
  type Timer,
} from "@telepace/core";
import type { TelegramOutbox } from "@telepace/outbox";
import { BatchFeed, type SendItem } from "./batch-feed.js";
import type { BatchRun } from "./batch-run.js";
import { type BroadcastSnapshot, snapshotOf } from "./broadcast-snapshot.js";
import { ChangeSignal } from "./change-signal.js";
import { BroadcastError } from "./errors.js";
import { type BroadcastReport, type BroadcastRunState, publish } from "./events.js";
import type { BroadcastTransport, ResolvedStartOptions } from "./options.js";
import {
  addCounts,
  type BroadcastCounts,
  encodeSettled,
  type RecipientOutcome,
  zeroCounts,
} from "./outcome.js";
import { RateMeter } from "./rate-meter.js";
import { RecipientReader } from "./recipients.js";
import { isLeaseLost, SendPipeline } from "./send-pipeline.js";
import type { BatchClaim, BroadcastRecord, BroadcastStore } from "./store.js";
import { StoreRetry } from "./store-retry.js";

/** What a broadcast runs with, from its registry. */
export interface BroadcastParts {
  readonly outbox: TelegramOutbox;
  readonly transport: BroadcastTransport;
  readonly store: BroadcastStore;
  readonly workerId: string;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** What stops a run before the store says it is done. */
interface Stop {
  readonly status: "cancelled" | "failed" | "interrupted";
  readonly error?: unknown;
}

/**
 * A running broadcast: created by {@link BroadcastRegistry.start}. `result` settles when it ends
 * in this process (completed, cancelled, failed or interrupted) and never rejects.
 */
export class Broadcast {
  readonly id: string;
  /** How it ended in this process; never rejects. */
  readonly result: Promise<BroadcastReport>;
  readonly #options: ResolvedStartOptions;
  readonly #parts: BroadcastParts;
  readonly #reader: RecipientReader;
  readonly #rate: RateMeter;
  readonly #startedAt: number;
  #state: BroadcastRunState = "starting";
  #resumed = false;
  #record: BroadcastRecord | undefined;
  readonly #batches = new Set<BatchRun>();
  /** Settled positions of batches this run gave back unfinished: in its report, not the store's counts. */
  readonly #released = zeroCounts();
  readonly #feed: BatchFeed;
  /** Recipients to send (again) before reading further: refused paid sends, aborted, migrated. */
  readonly #retry: SendItem[] = [];
  readonly #sends: SendPipeline;
  #consecutiveFailures = 0;
  /** When the next free send may be handed to the outbox (they are spread evenly). */
  #nextFreeAt = Number.NEGATIVE_INFINITY;
  readonly #storeRetry: StoreRetry;
  #stop: Stop | undefined;
  /** Outcome writes under way: a stop waits for them before it gives the batches back. */
  #writes = 0;
  /** Settles once the broadcast is open in the store (or could not be opened). */
  readonly #opened = createDeferred<void>();
  readonly #changes: ChangeSignal;
  #renewTimer: Timer | undefined;
  readonly #stopListening: () => void;

  /** @internal Created by the registry with checked options. */
  constructor(id: string, options: ResolvedStartOptions, parts: BroadcastParts) {
    this.id = id;
    this.#options = options;
    this.#parts = parts;
    this.#reader = new RecipientReader(options.recipients);
    this.#startedAt = parts.clock.now();
    this.#rate = new RateMeter(this.#startedAt);
    this.#changes = new ChangeSignal(parts.clock);
    this.#storeRetry = new StoreRetry(id, parts.clock, parts.logger);
    this.#sends = new SendPipeline(
      {
        id,
        message: options.message,
        priority: options.priority,
        outbox: parts.outbox,
        transport: parts.transport,
        store: parts.store,
        clock: parts.clock,
        logger: parts.logger,
        isStopped: () => this.#stop !== undefined,
        requeue: (item) => this.#retry.unshift(item),
        later: (item, delayMs) => this.#later(item, delayMs),
        settle: (item, outcome, error) => this.#settle(item, outcome, error),
        lose: (batch) => this.#lose(batch),
        storeFailed: (error) => {
          this.#storeRetry.failed(error);
          return this.#storeRetry.delayMs();
        },
        interrupted: () => this.#stopWith({ status: "interrupted" }),
        changed: () => this.#notify(),
      },
      options.paid,
    );
    this.#feed = new BatchFeed({
      id,
      store: parts.store,
      workerId: parts.workerId,
      clock: parts.clock,
      logger: parts.logger,
      leaseMs: options.leaseMs,
      resendInFlight: options.resendInFlight,
      reader: this.#reader,
      batches: this.#batches,
      isHeld: () => this.#stop !== undefined || this.#state === "paused",
      withStore: (call) => this.#withStore(call),
      recorded: (record) => {
        this.#record = record;
      },
      pausedInStore: () => this.#pauseHere(),
      cancelledInStore: () => this.#stopWith({ status: "cancelled" }),
      settle: (item, outcome) => this.#settle(item, outcome),
      maybeComplete: (batch) => this.#maybeComplete(batch),
      publishBatch: (claim, action) => this.#publishBatch(claim, action),
    });
    this.#stopListening = onAbort(options.signal, () => this.#stopWith({ status: "interrupted" }));
    this.result = this.#run();
  }

  /** The state in this process. */
  get state(): BroadcastRunState {
    return this.#state;
  }

  /**
   * Pauses: nothing more is sent (sends waiting in the outbox are taken back), and the store
   * records it, so other processes and a later start stay paused too until {@link resume}.
   * Resolves once none of its requests is in flight.
   */
  async pause(): Promise<void> {
    await this.#opened.promise;
    if (this.#isOver() || this.#state === "paused") return;
    this.#pauseHere();
    await this.#withStore(() => this.#parts.store.setState(this.id, "paused"));
    while (this.#sends.size > 0) await this.#nextChange();
  }

  /** Resumes a paused broadcast (paused here, in another process, or by an earlier run). */
  async resume(): Promise<void> {
    await this.#opened.promise;
    if (this.#isOver() || this.#state !== "paused") return;
    const record = await this.#withStore(() => this.#parts.store.setState(this.id, "running"));
    if (record !== undefined) this.#record = record;
    this.#resumeHere();
  }

  /**
   * Cancels: nothing more is sent by any process; what is in flight finishes. Resolves with the
   * report once it has.
   */
  async cancel(): Promise<BroadcastReport> {
    await this.#opened.promise;
    if (!this.#isOver()) {
      this.#stopWith({ status: "cancelled" });
      await this.#withStore(() => this.#parts.store.setState(this.id, "cancelled"));
    }
    return this.result;
  }

  /** @internal Stops this run as interrupted (the registry closes); a later start resumes. */
  interrupt(): Promise<BroadcastReport> {
    this.#stopWith({ status: "interrupted" });
    return this.result;
  }

  /** A fresh frozen view. */
  snapshot(): BroadcastSnapshot {
    const inFlight = this.#sends.inFlight;
    return snapshotOf({
      id: this.id,
      state: this.#state,
      mode: this.#sends.mode,
      resumed: this.#resumed,
      total: this.#total(),
      counts: this.#counts(),
      queued: this.#sends.size - inFlight,
      inFlight,
      batches: this.#batches.size,
      ratePerSecond: this.#rate.perSecond(this.#parts.clock.now()),
      storeFailures: this.#storeRetry.failures,
    });
  }

  // ------------------------------------------------------------------------------- the run

  async #run(): Promise<BroadcastReport> {
    const { store } = this.#parts;
    try {
      const existing = await this.#withStore(() => store.read(this.id));
      const record = await this.#withStore(() =>
        store.open(this.id, {
          fingerprint: this.#options.message.fingerprint,
          batchSize: this.#options.batchSize,
          end: this.#options.total ?? this.#reader.knownTotal,
        }),
      );
      if (record === undefined) return await this.#finish("interrupted");
      this.#record = record;
      this.#resumed = existing !== undefined;
      publish("started", () => ({
        type: "started",
        id: this.id,
        resumed: this.#resumed,
        mode: this.#sends.mode,
        total: this.#total(),
      }));
      if (record.state === "completed" || record.state === "cancelled") {
        return this.#finish(record.state);
      }
      this.#setState(record.state === "paused" ? "paused" : "running");
      this.#opened.resolve();
      this.#armRenewal();
      await this.#pump();
      await this.#drain();
      return this.#finish(this.#stop?.status ?? "completed", this.#stop?.error);
    } catch (error) {
      // A conflict, a corrupt record, or a store that fails where nothing can be retried.
      this.#stop ??= { status: "failed", error };
      await this.#drain().catch(() => {});
      return this.#finish("failed", this.#stop.error ?? error);
    } finally {
      this.#opened.resolve();
      this.#stopListening();
      this.#renewTimer?.cancel();
      await this.#reader.close().catch(() => {});
    }
  }

  /** Hands out sends until nothing is left for this process, or the run is stopped. */
  async #pump(): Promise<void> {
    for (;;) {
      if (this.#stop !== undefined) return;
      if (this.#state === "paused" || this.#sends.size >= this.#options.maxQueued) {
        await this.#nextChange();
        continue;
      }
      const now = this.#parts.clock.now();
      const freeAt = Math.max(this.#sends.freeNotBefore, this.#nextFreeAt);
      if (this.#sends.mode !== "paid" && now < freeAt) {
        await this.#nextChange(freeAt - now);
        continue;
      }
      const item = this.#retry.shift() ?? (await this.#feed.next());
      if (item === "wait") {
        await this.#nextChange(Math.max(0, this.#feed.claimAgainAt - this.#parts.clock.now()));
        continue;
      }
      if (item === undefined) {
        if (this.#batches.size === 0 && this.#retry.length === 0) return;
        await this.#nextChange();
        continue;
      }
      if (this.#sends.mode !== "paid") {
        // Spread evenly, one every 1/maxPerSecond s (one late send may catch up): a global slot
        // then frees every 1/30 s for a reply, where 30 sends at the top of each second would
        // hold a reply for up to a second. Paid sends have a budget of their own.
        const spacing = 1000 / this.#options.maxPerSecond;
        this.#nextFreeAt = Math.max(this.#nextFreeAt, now - spacing) + spacing;
      }
      this.#sends.send(item);
    }
  }

  /** Waits until no send of this run is in the outbox and no batch is being completed. */
  async #drain(): Promise<void> {
    this.#sends.takeBack();
    while (
      this.#sends.size > 0 ||
      this.#writes > 0 ||
      [...this.#batches].some((batch) => batch.completing)
    ) {
      await this.#nextChange();
    }
    if (this.#stop === undefined) return;
    // Stopped before the end: the batches go back, so the next start (anywhere) takes them over.
    for (const batch of [...this.#batches]) {
      this.#batches.delete(batch);
      if (batch.lost) continue;
      batch.addTo(this.#released);
      await this.#parts.store.release(batch.claim).catch(() => {});
      this.#publishBatch(batch.claim, "released");
    }
  }

  async #finish(status: BroadcastReport["status"], error?: unknown): Promise<BroadcastReport> {
    const record = await this.#parts.store.read(this.id).catch(() => undefined);
    if (record !== undefined) this.#record = record;
    this.#setState(status);
    const report: BroadcastReport = Object.freeze({
      id: this.id,
      status,
      counts: this.#counts(),
      total: this.#total(),
      mode: this.#sends.mode,
      elapsedMs: this.#parts.clock.now() - this.#startedAt,
      ...(error === undefined ? {} : { error }),
    });
    publish("finished", () => ({
      type: "finished",
      id: this.id,
      status,
      counts: report.counts,
      elapsedMs: report.elapsedMs,
    }));
    safeLog(
      this.#parts.logger,
      status === "failed" ? "error" : "info",
      { broadcast: this.id, status, counts: report.counts, elapsedMs: report.elapsedMs },
      "broadcast ended",
    );
    return report;
  }

  // ------------------------------------------------------------------------------- sending

  /** Puts a recipient back in line after `delayMs`. */
  #later(item: SendItem, delayMs: number): void {
    item.batch.open++; // held open while it waits, so the batch cannot complete without it
    this.#parts.clock.setTimer(() => {
      item.batch.open--;
      if (!item.batch.lost && this.#stop === undefined) this.#retry.push(item);
      this.#notify();
    }, delayMs);
  }

  // ------------------------------------------------------------------------------- outcomes

  #settle(item: SendItem, outcome: RecipientOutcome, error?: unknown): void {
    if (outcome === "failed" && error !== undefined) {
      this.#consecutiveFailures++;
      if (this.#consecutiveFailures >= this.#options.maxConsecutiveFailures) {
        void this.#failing(error);
      }
    } else if (outcome !== "failed") {
      this.#consecutiveFailures = 0;
    }
    const settled = { outcome, migrated: item.migrated, resent: item.resent };
    const { batch, position } = item;
    const write = async (): Promise<void> => {
      this.#writes++;
      try {
        await this.#parts.store.markSettled(batch.claim, position, encodeSettled(settled));
      } catch (failure) {
        if (isLeaseLost(failure)) {
          this.#lose(batch);
        } else {
          this.#storeRetry.failed(failure);
          this.#writes++; // the retry is still under way
          this.#parts.clock.setTimer(() => {
            this.#writes--;
            void write();
          }, this.#storeRetry.delayMs());
        }
        return;
      } finally {
        this.#writes--;
        this.#notify();
      }
      this.#storeRetry.succeeded();
      batch.open--;
      batch.count(settled);
      this.#rate.record(this.#parts.clock.now());
      publish("settled", () => ({
        type: "settled",
        id: this.id,
        position,
        chatId: item.chatId === "" ? undefined : item.chatId,
        ...settled,
      }));
      this.#maybeComplete(batch);
      this.#notify();
    };
    void write();
  }

  #maybeComplete(batch: BatchRun): void {
    if (!batch.isDone) return;
    batch.completing = true;
    void this.#withStore(() => this.#parts.store.complete(batch.claim, batch.end)).then(
      (record) => {
        batch.completing = false;
        if (record !== undefined) {
          this.#record = record;
          this.#batches.delete(batch);
          this.#publishBatch(batch.claim, "completed");
          if (record.state === "completed") this.#feed.claimsDone();
        }
        this.#notify();
      },
      (error: unknown) => {
        batch.completing = false;
        if (isLeaseLost(error)) this.#lose(batch);
        this.#notify();
      },
    );
  }

  /** The batch is another process's now: its sends still waiting are dropped. */
  #lose(batch: BatchRun): void {
    if (batch.lost) return;
    batch.lost = true;
    this.#batches.delete(batch);
    this.#feed.forget(batch);
    this.#sends.takeBack(batch);
    this.#publishBatch(batch.claim, "lost");
    safeLog(
      this.#parts.logger,
      "warn",
      { broadcast: this.id, batch: batch.claim.batch },
      "broadcast lost a batch's lease: another process goes on with it",
    );
    this.#notify();
  }

  async #failing(cause: unknown): Promise<void> {
    if (this.#stop !== undefined) return;
    const error = new BroadcastError(
      "ERR_BROADCAST_FAILING",
      `Broadcast "${this.id}" stopped: ${this.#options.maxConsecutiveFailures} sends in a row failed for a reason that is not their recipient's; it is paused in its store`,
      { cause },
    );
    this.#stopWith({ status: "failed", error });
    await this.#withStore(() => this.#parts.store.setState(this.id, "paused"));
  }

  // ------------------------------------------------------------------------------- state

  #pauseHere(): void {
    if (this.#state === "paused") return;
    this.#setState("paused");
    this.#sends.takeBack();
    this.#notify();
  }

  #resumeHere(): void {
    if (this.#state !== "paused" || this.#isOver()) return;
    this.#feed.claimNow();
    this.#setState("running");
    this.#notify();
  }

  #stopWith(stop: Stop): void {
    if (this.#stop !== undefined || this.#isOver()) return;
    this.#stop = stop;
    this.#sends.takeBack();
    this.#notify();
  }

  #isOver(): boolean {
    return (
      this.#state === "completed" ||
      this.#state === "cancelled" ||
      this.#state === "failed" ||
      this.#state === "interrupted"
    );
  }

  #setState(state: BroadcastRunState): void {
    if (this.#state === state) return;
    this.#state = state;
    publish("state", () => ({ type: "state", id: this.id, state }));
  }

  /**
   * Every third of the lease: renews this process's batches, and (with a shared store) picks up
   * a pause, a resume or a cancel made by another process.
   */
  #armRenewal(): void {
    const every = this.#options.leaseMs / 3;
    const tick = async (): Promise<void> => {
      const { store } = this.#parts;
      for (const batch of [...this.#batches]) {
        const held = await store.renew(batch.claim, this.#options.leaseMs).catch(() => true);
        if (!held) this.#lose(batch);
      }
      if (store.isShared) {
        const record = await store.read(this.id).catch(() => undefined);
        if (record !== undefined) {
          this.#record = record;
          if (record.state === "paused") this.#pauseHere();
          else if (record.state === "running") this.#resumeHere();
          else if (record.state === "cancelled") this.#stopWith({ status: "cancelled" });
        }
      }
      if (this.#stop === undefined && !this.#isOver()) {
        this.#renewTimer = this.#parts.clock.setTimer(() => void tick(), every);
      }
    };
    this.#renewTimer = this.#parts.clock.setTimer(() => void tick(), every);
  }

  // ------------------------------------------------------------------------------- helpers

  /** A store call, retried after a growing backoff while the store fails, until the run stops. */
  #withStore<T>(call: () => Promise<T>): Promise<T | undefined> {
    return this.#storeRetry.run(call, () => this.#stop !== undefined);
  }

  /** Resolves at the next change (a send settled, a batch done, a state change) or after `ms`. */
  #nextChange(ms?: number): Promise<void> {
    return this.#changes.next(ms);
  }

  #notify(): void {
    this.#changes.notify();
  }

  #publishBatch(claim: BatchClaim, action: "claimed" | "completed" | "released" | "lost"): void {
    publish("batch", () => ({
      type: "batch",
      id: this.id,
      batch: claim.batch,
      from: claim.from,
      to: claim.to,
      action,
      takenOver: claim.recorded.size > 0,
    }));
  }

  #counts(): BroadcastCounts {
    const counts = zeroCounts();
    if (this.#record !== undefined) addCounts(counts, this.#record.counts);
    addCounts(counts, this.#released);
    for (const batch of this.#batches) batch.addTo(counts);
    return Object.freeze(counts);
  }

  #total(): number | undefined {
    return this.#record?.end ?? this.#options.total ?? this.#reader.knownTotal;
  }
}

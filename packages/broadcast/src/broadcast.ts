// One broadcast as this process runs it: claims batches from the store, reads their recipients,
// hands each send to the outbox (recorded as started before its request goes out, its outcome
// after), completes batches, renews their leases, and answers pause, resume and cancel. At most
// `maxQueued` sends are in the outbox at once, so memory does not grow with the recipients.

import {
  type Clock,
  createDeferred,
  type Deferred,
  type Logger,
  onAbort,
  safeLog,
  type Timer,
} from "@telepace/core";
import {
  type ChatId,
  NetworkError,
  type OutboxOutcome,
  planWrite,
  retryAfterFrom,
  type TelegramOutbox,
  writeOperation,
} from "@telepace/outbox";
import { BatchRun } from "./batch-run.js";
import { BroadcastError } from "./errors.js";
import {
  type BroadcastMode,
  type BroadcastReport,
  type BroadcastRunState,
  publish,
} from "./events.js";
import { payloadFor } from "./message.js";
import type { BroadcastTransport, ResolvedStartOptions } from "./options.js";
import { broadcastDefaults } from "./options.js";
import {
  addCounts,
  type BroadcastCounts,
  decodeRecord,
  encodeSettled,
  type RecipientOutcome,
  settledOf,
  verdictOf,
  zeroCounts,
} from "./outcome.js";
import { RateMeter } from "./rate-meter.js";
import { END, isChatId, RecipientReader } from "./recipients.js";
import type { BatchClaim, BroadcastRecord, BroadcastStore } from "./store.js";

/** What a broadcast runs with, from its registry. */
export interface BroadcastParts {
  readonly outbox: TelegramOutbox;
  readonly transport: BroadcastTransport;
  readonly store: BroadcastStore;
  readonly workerId: string;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** A live view of a broadcast, as this process sees it. */
export interface BroadcastSnapshot {
  readonly id: string;
  readonly state: BroadcastRunState;
  readonly mode: BroadcastMode;
  /** It existed in the store when this run started. */
  readonly resumed: boolean;
  /** The number of recipients, once known. */
  readonly total: number | undefined;
  /**
   * Outcomes so far: the store's for finished batches (every process's, as of this process's
   * last look) plus this process's open batches.
   */
  readonly counts: BroadcastCounts;
  /** Recipients with an outcome. */
  readonly settled: number;
  /** Recipients without one yet; `undefined` until the total is known. */
  readonly remaining: number | undefined;
  /** Sends of this process waiting in the outbox. */
  readonly queued: number;
  /** Sends of this process whose request started and has not been answered. */
  readonly inFlight: number;
  /** Batches this process holds. */
  readonly batches: number;
  /** Recipients settled per second by this process, over the last 10 s of its clock. */
  readonly ratePerSecond: number;
  /** Clock ms until the remaining recipients are reached at that rate; `undefined` if unknown. */
  readonly etaMs: number | undefined;
  /** Store calls that failed (each retried after a backoff). */
  readonly storeFailures: number;
}

/** A recipient on its way: its place, its chat, and what is known of its send. */
interface SendItem {
  readonly batch: BatchRun;
  readonly position: number;
  chatId: ChatId;
  /** Its start is recorded in the store. */
  marked: boolean;
  migrated: boolean;
  /** In flight when a process died, and sent again. */
  readonly resent: boolean;
}

/** A send handed to the outbox. */
interface QueuedSend {
  readonly item: SendItem;
  readonly controller: AbortController;
  /** Its `execute` was called: it may be in flight, so it is never aborted. */
  started: boolean;
}

/** A failure the broadcast raised itself inside a send's `execute`. */
class OwnFailure extends Error {
  constructor(
    readonly kind: "paid-refused" | "lease-lost" | "store",
    options: ErrorOptions,
  ) {
    super(`broadcast: ${kind}`, options);
  }
}

/** A transport failure that proves the request never reached Telegram. */
function isNeverSent(error: unknown): boolean {
  return error instanceof NetworkError && !error.mayHaveReachedServer;
}

function isLeaseLost(error: unknown): boolean {
  return error instanceof BroadcastError && error.code === "ERR_BROADCAST_LEASE_LOST";
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
  #mode: BroadcastMode;
  #resumed = false;
  #record: BroadcastRecord | undefined;
  readonly #batches = new Set<BatchRun>();
  /** Settled positions of batches this run gave back unfinished: in its report, not the store's counts. */
  readonly #released = zeroCounts();
  /** The batch whose positions are being read, and the next position in it. */
  #reading: BatchRun | undefined;
  #readAt = 0;
  /** Recipients to send (again) before reading further: refused paid sends, aborted, migrated. */
  readonly #retry: SendItem[] = [];
  readonly #queued = new Set<QueuedSend>();
  /** The store has no batch left to hand out. */
  #claimsDone = false;
  /** When the store said to ask again. */
  #claimAgainAt = Number.NEGATIVE_INFINITY;
  #sourceEnd: number | undefined;
  #consecutiveFailures = 0;
  /** After a paid refusal, free sends wait out its 429 first. */
  #freeNotBefore = Number.NEGATIVE_INFINITY;
  /** When the next free send may be handed to the outbox (they are spread evenly). */
  #nextFreeAt = Number.NEGATIVE_INFINITY;
  #storeFailures = 0;
  #storeFailuresInRow = 0;
  #stop: Stop | undefined;
  /** Outcome writes under way: a stop waits for them before it gives the batches back. */
  #writes = 0;
  /** Settles once the broadcast is open in the store (or could not be opened). */
  readonly #opened = createDeferred<void>();
  #changed: Deferred<void> | undefined;
  #renewTimer: Timer | undefined;
  readonly #stopListening: () => void;

  /** @internal Created by the registry with checked options. */
  constructor(id: string, options: ResolvedStartOptions, parts: BroadcastParts) {
    this.id = id;
    this.#options = options;
    this.#parts = parts;
    this.#reader = new RecipientReader(options.recipients);
    this.#mode = options.paid ? "paid" : "free";
    this.#startedAt = parts.clock.now();
    this.#rate = new RateMeter(this.#startedAt);
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
    while (this.#queued.size > 0) await this.#nextChange();
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
    const now = this.#parts.clock.now();
    const counts = this.#counts();
    const settled = settledOf(counts);
    const total = this.#total();
    const remaining = total === undefined ? undefined : Math.max(0, total - settled);
    const ratePerSecond = this.#rate.perSecond(now);
    let inFlight = 0;
    for (const send of this.#queued) if (send.started) inFlight++;
    return Object.freeze({
      id: this.id,
      state: this.#state,
      mode: this.#mode,
      resumed: this.#resumed,
      total,
      counts,
      settled,
      remaining,
      queued: this.#queued.size - inFlight,
      inFlight,
      batches: this.#batches.size,
      ratePerSecond,
      etaMs:
        remaining === undefined
          ? undefined
          : remaining === 0
            ? 0
            : ratePerSecond > 0
              ? (remaining / ratePerSecond) * 1000
              : undefined,
      storeFailures: this.#storeFailures,
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
        mode: this.#mode,
        total: this.#total(),
      }));
      if (record.state === "completed" || record.state === "cancelled") {
        return this.#finish(record.state);
      }
      this.#setState(record.state === "paused" ? "paused" : "running");
      this.#opened.resolve();
      this.#armRenewal();
      await this.#feed();
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
  async #feed(): Promise<void> {
    for (;;) {
      if (this.#stop !== undefined) return;
      if (this.#state === "paused" || this.#queued.size >= this.#options.maxQueued) {
        await this.#nextChange();
        continue;
      }
      const now = this.#parts.clock.now();
      const freeAt = Math.max(this.#freeNotBefore, this.#nextFreeAt);
      if (this.#mode !== "paid" && now < freeAt) {
        await this.#nextChange(freeAt - now);
        continue;
      }
      const item = this.#retry.shift() ?? (await this.#nextItem());
      if (item === "wait") {
        await this.#nextChange(Math.max(0, this.#claimAgainAt - this.#parts.clock.now()));
        continue;
      }
      if (item === undefined) {
        if (this.#batches.size === 0 && this.#retry.length === 0) return;
        await this.#nextChange();
        continue;
      }
      if (this.#mode !== "paid") {
        // Spread evenly, one every 1/maxPerSecond s (one late send may catch up): a global slot
        // then frees every 1/30 s for a reply, where 30 sends at the top of each second would
        // hold a reply for up to a second. Paid sends have a budget of their own.
        const spacing = 1000 / this.#options.maxPerSecond;
        this.#nextFreeAt = Math.max(this.#nextFreeAt, now - spacing) + spacing;
      }
      this.#send(item);
    }
  }

  /** Waits until no send of this run is in the outbox and no batch is being completed. */
  async #drain(): Promise<void> {
    for (const send of this.#queued) if (!send.started) send.controller.abort();
    while (
      this.#queued.size > 0 ||
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
      mode: this.#mode,
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

  // ------------------------------------------------------------------------------- reading

  /** The next recipient to send, `undefined` when this process has none left, or "wait". */
  async #nextItem(): Promise<SendItem | undefined | "wait"> {
    for (;;) {
      if (this.#stop !== undefined || this.#state === "paused") return "wait";
      const batch = this.#reading ?? (await this.#claimBatch());
      if (batch === undefined || batch === "wait") return batch;
      if (batch.lost) {
        this.#reading = undefined;
        continue;
      }
      const position = this.#readAt;
      const value =
        position >= batch.claim.to || (this.#sourceEnd !== undefined && position >= this.#sourceEnd)
          ? END
          : await this.#reader.read(position);
      if (value === END) {
        if (position < batch.claim.to) {
          this.#sourceEnd = Math.min(this.#sourceEnd ?? position, position);
          batch.end = position;
        }
        batch.allRead = true;
        this.#reading = undefined;
        this.#maybeComplete(batch);
        continue;
      }
      this.#readAt++;
      const recorded = decodeRecord(batch.claim.recorded.get(position));
      if (recorded !== undefined && recorded !== "started") {
        batch.count(recorded); // an earlier holder's outcome: already in the store
        continue;
      }
      batch.open++;
      if (!isChatId(value)) {
        safeLog(
          this.#parts.logger,
          "warn",
          { broadcast: this.id, position, type: typeof value },
          "broadcast recipient is not a chat id",
        );
        this.#settle(
          { batch, position, chatId: "", marked: false, migrated: false, resent: false },
          "failed",
        );
        continue;
      }
      const inFlightAtCrash = recorded === "started";
      const item: SendItem = {
        batch,
        position,
        chatId: value,
        marked: inFlightAtCrash,
        migrated: false,
        resent: inFlightAtCrash && this.#options.resendInFlight,
      };
      if (inFlightAtCrash && !this.#options.resendInFlight) {
        this.#settle(item, "maybe-delivered");
        continue;
      }
      return item;
    }
  }

  async #claimBatch(): Promise<BatchRun | undefined | "wait"> {
    if (this.#claimsDone) return undefined;
    if (this.#parts.clock.now() < this.#claimAgainAt) return "wait";
    const { store, workerId } = this.#parts;
    const result = await this.#withStore(() =>
      store.claim(this.id, workerId, this.#options.leaseMs),
    );
    if (result === undefined) return "wait";
    switch (result.status) {
      case "claimed": {
        const batch = new BatchRun(result.claim);
        this.#batches.add(batch);
        this.#reading = batch;
        this.#readAt = result.claim.from;
        this.#publishBatch(result.claim, "claimed");
        return batch;
      }
      case "wait":
        // Every open batch is leased: ask again when the first lease can run out, or sooner,
        // to see the broadcast complete once the other processes finish theirs.
        this.#record = result.record;
        this.#claimAgainAt =
          this.#parts.clock.now() + Math.min(result.retryInMs, broadcastDefaults.claimPollMs);
        return "wait";
      case "stopped":
        this.#record = result.record;
        this.#claimsDone = result.record.state === "completed";
        if (result.record.state === "paused") this.#pauseHere();
        else if (result.record.state === "cancelled") this.#stopWith({ status: "cancelled" });
        return result.record.state === "completed" ? undefined : "wait";
    }
  }

  // ------------------------------------------------------------------------------- sending

  #send(item: SendItem): void {
    const controller = new AbortController();
    const queued: QueuedSend = { item, controller, started: false };
    this.#queued.add(queued);
    const { message, priority } = this.#options;
    const payload = payloadFor(message, item.chatId, this.#mode === "paid");
    const plan = planWrite(message.method, payload);
    const op = {
      ...writeOperation(plan, (signal) => this.#execute(queued, payload, signal)),
      priority,
    };
    this.#parts.outbox.enqueue(op, { signal: controller.signal }).then(
      (outcome) => this.#onOutcome(queued, outcome),
      () => this.#onAborted(queued),
    );
  }

  /** One attempt of a send: its start made durable first, then the request. */
  async #execute(
    queued: QueuedSend,
    payload: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<unknown> {
    queued.started = true;
    const { item } = queued;
    if (!item.marked) {
      try {
        await this.#parts.store.markStarted(item.batch.claim, item.position);
      } catch (error) {
        throw new OwnFailure(isLeaseLost(error) ? "lease-lost" : "store", { cause: error });
      }
      item.marked = true;
    }
    signal.throwIfAborted();
    try {
      return await this.#parts.transport(this.#options.message.method, payload, signal);
    } catch (error) {
      const limited = retryAfterFrom(error);
      if (limited !== undefined || isNeverSent(error)) {
        // Answered without a delivery: not in flight any more (a crash before the retry must
        // not count it as maybe delivered); the retry marks it started again.
        item.marked = false;
        await this.#parts.store.markUnsent(item.batch.claim, item.position).catch(() => {});
      }
      if (limited !== undefined && payload.allow_paid_broadcast === true) {
        this.#paidRefused(limited.retryAfterMs);
        throw new OwnFailure("paid-refused", { cause: error });
      }
      throw error;
    }
  }

  #onOutcome(queued: QueuedSend, outcome: OutboxOutcome<unknown>): void {
    this.#queued.delete(queued);
    this.#notify();
    const { item } = queued;
    if (outcome.status === "failed" && outcome.error instanceof OwnFailure) {
      switch (outcome.error.kind) {
        case "paid-refused":
          this.#retry.unshift(item);
          return;
        case "lease-lost":
          this.#lose(item.batch);
          return;
        case "store":
          this.#storeFailed(outcome.error.cause);
          this.#later(item, this.#storeRetryMs());
          return;
      }
    }
    if (item.batch.lost) return; // another process holds the batch now and decides
    const verdict = verdictOf(outcome);
    switch (verdict.kind) {
      case "settled":
        this.#settle(item, verdict.outcome, verdict.error);
        return;
      case "migrate":
        if (item.migrated) {
          this.#settle(item, "failed", outcome.status === "failed" ? outcome.error : undefined);
          return;
        }
        item.chatId = verdict.chatId;
        item.migrated = true;
        this.#retry.unshift(item);
        return;
      case "again":
        this.#later(item, broadcastDefaults.fullRetryMs);
        return;
      case "interrupted":
        // The outbox closed: the position stays as it is in the store for the next run.
        this.#stopWith({ status: "interrupted" });
        return;
    }
  }

  /** A send taken back before its request (a pause, a paid refusal, a stop). */
  #onAborted(queued: QueuedSend): void {
    this.#queued.delete(queued);
    this.#notify();
    if (queued.started || queued.item.batch.lost || this.#stop !== undefined) return;
    this.#retry.unshift(queued.item);
  }

  /** Puts a recipient back in line after `delayMs`. */
  #later(item: SendItem, delayMs: number): void {
    item.batch.open++; // held open while it waits, so the batch cannot complete without it
    this.#parts.clock.setTimer(() => {
      item.batch.open--;
      if (!item.batch.lost && this.#stop === undefined) this.#retry.push(item);
      this.#notify();
    }, delayMs);
  }

  #paidRefused(retryAfterMs: number): void {
    if (this.#mode !== "paid") return;
    this.#mode = "paid-refused";
    this.#freeNotBefore = this.#parts.clock.now() + retryAfterMs;
    safeLog(
      this.#parts.logger,
      "warn",
      { broadcast: this.id, retryAfterMs },
      "broadcast: Telegram refused paid broadcast sends (a 429); going on at the free pace",
    );
    publish("paid-refused", () => ({ type: "paid-refused", id: this.id, retryAfterMs }));
    // Sends still waiting were made paid: take them back to send free (after this attempt ends).
    queueMicrotask(() => {
      for (const send of this.#queued) if (!send.started) send.controller.abort();
    });
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
          this.#storeFailed(failure);
          this.#writes++; // the retry is still under way
          this.#parts.clock.setTimer(() => {
            this.#writes--;
            void write();
          }, this.#storeRetryMs());
        }
        return;
      } finally {
        this.#writes--;
        this.#notify();
      }
      this.#storeFailuresInRow = 0;
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
          if (record.state === "completed") this.#claimsDone = true;
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
    if (this.#reading === batch) this.#reading = undefined;
    for (const send of this.#queued) {
      if (send.item.batch === batch && !send.started) send.controller.abort();
    }
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
    for (const send of this.#queued) if (!send.started) send.controller.abort();
    this.#notify();
  }

  #resumeHere(): void {
    if (this.#state !== "paused" || this.#isOver()) return;
    this.#claimAgainAt = Number.NEGATIVE_INFINITY;
    this.#setState("running");
    this.#notify();
  }

  #stopWith(stop: Stop): void {
    if (this.#stop !== undefined || this.#isOver()) return;
    this.#stop = stop;
    for (const send of this.#queued) if (!send.started) send.controller.abort();
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

  /** Runs a store call, retrying failures after a growing backoff until it works or the run stops. */
  async #withStore<T>(call: () => Promise<T>): Promise<T | undefined> {
    for (;;) {
      try {
        const value = await call();
        this.#storeFailuresInRow = 0;
        return value;
      } catch (error) {
        if (
          error instanceof BroadcastError ||
          error instanceof TypeError ||
          error instanceof RangeError
        ) {
          throw error;
        }
        this.#storeFailed(error);
        if (this.#stop !== undefined) return undefined;
        await this.#parts.clock.sleep(this.#storeRetryMs());
      }
    }
  }

  #storeFailed(error: unknown): void {
    this.#storeFailures++;
    this.#storeFailuresInRow++;
    safeLog(
      this.#parts.logger,
      this.#storeFailuresInRow === 1 ? "error" : "debug",
      {
        broadcast: this.id,
        error:
          error instanceof Error ? ((error as { code?: string }).code ?? error.name) : typeof error,
        consecutiveFailures: this.#storeFailuresInRow,
      },
      "broadcast store failed; retrying",
    );
  }

  #storeRetryMs(): number {
    const { storeRetryBaseMs, storeRetryMaxMs } = broadcastDefaults;
    return Math.min(
      storeRetryBaseMs * 2 ** Math.max(0, this.#storeFailuresInRow - 1),
      storeRetryMaxMs,
    );
  }

  /** Resolves at the next change (a send settled, a batch done, a state change) or after `ms`. */
  #nextChange(ms?: number): Promise<void> {
    this.#changed ??= createDeferred<void>();
    const { promise } = this.#changed;
    if (ms !== undefined) {
      const timer = this.#parts.clock.setTimer(() => this.#notify(), ms);
      void promise.then(() => timer.cancel());
    }
    return promise;
  }

  #notify(): void {
    const changed = this.#changed;
    this.#changed = undefined;
    changed?.resolve();
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

// A broadcast's sends in the outbox: each one an op at the broadcast's priority whose `execute`
// first makes its start durable, then makes the request; what its outcome means for the
// recipient; and the paid mode, given up at the first 429 a paid send earns.

import type { Clock, Logger } from "@telepace/core";
import { safeLog } from "@telepace/core";
import {
  NetworkError,
  type OutboxOutcome,
  planWrite,
  retryAfterFrom,
  type TelegramOutbox,
  writeOperation,
} from "@telepace/outbox";
import type { SendItem } from "./batch-feed.js";
import type { BatchRun } from "./batch-run.js";
import { BroadcastError } from "./errors.js";
import { type BroadcastMode, publish } from "./events.js";
import { type CheckedMessage, payloadFor } from "./message.js";
import type { BroadcastTransport } from "./options.js";
import { broadcastDefaults } from "./options.js";
import { type RecipientOutcome, verdictOf } from "./outcome.js";
import type { BroadcastStore } from "./store.js";

/** A send handed to the outbox. */
interface QueuedSend {
  readonly item: SendItem;
  readonly controller: AbortController;
  /** Its `execute` was called: it may be in flight, so it is never taken back. */
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

/** Whether a store call failed because the batch's lease passed to another process. */
export function isLeaseLost(error: unknown): boolean {
  return error instanceof BroadcastError && error.code === "ERR_BROADCAST_LEASE_LOST";
}

/** What the pipeline needs of the broadcast it sends for. */
export interface SendHost {
  readonly id: string;
  readonly message: CheckedMessage;
  readonly priority: number;
  readonly outbox: TelegramOutbox;
  readonly transport: BroadcastTransport;
  readonly store: BroadcastStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Whether the run is stopping: a send taken back is then dropped, not sent later. */
  isStopped(): boolean;
  /** Sends `item` (again) before reading further. */
  requeue(item: SendItem): void;
  /** Sends `item` again after `delayMs`. */
  later(item: SendItem, delayMs: number): void;
  settle(item: SendItem, outcome: RecipientOutcome, error?: unknown): void;
  /** The batch's lease passed on. */
  lose(batch: BatchRun): void;
  /** The store failed: counts it and says how long to wait. */
  storeFailed(error: unknown): number;
  /** The outbox closed under the broadcast. */
  interrupted(): void;
  /** Something changed: a waiting feeder looks again. */
  changed(): void;
}

/** The broadcast's sends in the outbox, and its mode. */
export class SendPipeline {
  readonly #host: SendHost;
  readonly #queued = new Set<QueuedSend>();
  #mode: BroadcastMode;
  /** After a paid refusal, free sends wait out its 429 first. */
  #freeNotBefore = Number.NEGATIVE_INFINITY;

  constructor(host: SendHost, paid: boolean) {
    this.#host = host;
    this.#mode = paid ? "paid" : "free";
  }

  get mode(): BroadcastMode {
    return this.#mode;
  }

  /** Until when free sends wait (a paid refusal's 429). */
  get freeNotBefore(): number {
    return this.#freeNotBefore;
  }

  /** Sends in the outbox, queued or in flight. */
  get size(): number {
    return this.#queued.size;
  }

  /** Sends whose request started and was not answered yet. */
  get inFlight(): number {
    let count = 0;
    for (const send of this.#queued) if (send.started) count++;
    return count;
  }

  /** Takes back the sends still waiting in the outbox (of `batch` only, when given). */
  takeBack(batch?: BatchRun): void {
    for (const send of this.#queued) {
      if (!send.started && (batch === undefined || send.item.batch === batch)) {
        send.controller.abort();
      }
    }
  }

  send(item: SendItem): void {
    const host = this.#host;
    const controller = new AbortController();
    const queued: QueuedSend = { item, controller, started: false };
    this.#queued.add(queued);
    const payload = payloadFor(host.message, item.chatId, this.#mode === "paid");
    const plan = planWrite(host.message.method, payload);
    const op = {
      ...writeOperation(plan, (signal) => this.#execute(queued, payload, signal)),
      priority: host.priority,
    };
    host.outbox.enqueue(op, { signal: controller.signal }).then(
      (outcome) => this.#onOutcome(queued, outcome),
      () => this.#onTakenBack(queued),
    );
  }

  /** One attempt of a send: its start made durable first, then the request. */
  async #execute(
    queued: QueuedSend,
    payload: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<unknown> {
    const host = this.#host;
    queued.started = true;
    const { item } = queued;
    if (!item.marked) {
      try {
        await host.store.markStarted(item.batch.claim, item.position);
      } catch (error) {
        throw new OwnFailure(isLeaseLost(error) ? "lease-lost" : "store", { cause: error });
      }
      item.marked = true;
    }
    signal.throwIfAborted();
    try {
      return await host.transport(host.message.method, payload, signal);
    } catch (error) {
      const limited = retryAfterFrom(error);
      if (limited !== undefined || isNeverSent(error)) {
        // Answered without a delivery: not in flight any more (a crash before the retry must
        // not count it as maybe delivered); the retry marks it started again.
        item.marked = false;
        await host.store.markUnsent(item.batch.claim, item.position).catch(() => {});
      }
      if (limited !== undefined && payload.allow_paid_broadcast === true) {
        this.#paidRefused(limited.retryAfterMs);
        throw new OwnFailure("paid-refused", { cause: error });
      }
      throw error;
    }
  }

  #onOutcome(queued: QueuedSend, outcome: OutboxOutcome<unknown>): void {
    const host = this.#host;
    this.#queued.delete(queued);
    host.changed();
    const { item } = queued;
    if (outcome.status === "failed" && outcome.error instanceof OwnFailure) {
      switch (outcome.error.kind) {
        case "paid-refused":
          host.requeue(item);
          return;
        case "lease-lost":
          host.lose(item.batch);
          return;
        case "store":
          host.later(item, host.storeFailed(outcome.error.cause));
          return;
      }
    }
    if (item.batch.lost) return; // another process holds the batch now and decides
    const verdict = verdictOf(outcome);
    switch (verdict.kind) {
      case "settled":
        host.settle(item, verdict.outcome, verdict.error);
        return;
      case "migrate":
        if (item.migrated) {
          host.settle(item, "failed", outcome.status === "failed" ? outcome.error : undefined);
          return;
        }
        item.chatId = verdict.chatId;
        item.migrated = true;
        host.requeue(item);
        return;
      case "again":
        host.later(item, broadcastDefaults.fullRetryMs);
        return;
      case "interrupted":
        // The outbox closed: the position stays as it is in the store for the next run.
        host.interrupted();
        return;
    }
  }

  /** A send taken back before its request (a pause, a paid refusal, a stop). */
  #onTakenBack(queued: QueuedSend): void {
    this.#queued.delete(queued);
    this.#host.changed();
    if (queued.started || queued.item.batch.lost || this.#host.isStopped()) return;
    this.#host.requeue(queued.item);
  }

  #paidRefused(retryAfterMs: number): void {
    const host = this.#host;
    if (this.#mode !== "paid") return;
    this.#mode = "paid-refused";
    this.#freeNotBefore = host.clock.now() + retryAfterMs;
    safeLog(
      host.logger,
      "warn",
      { broadcast: host.id, retryAfterMs },
      "broadcast: Telegram refused paid broadcast sends (a 429); going on at the free pace",
    );
    publish("paid-refused", () => ({ type: "paid-refused", id: host.id, retryAfterMs }));
    // Sends still waiting were made paid: take them back to send free (after this attempt ends).
    queueMicrotask(() => this.takeBack());
  }
}

// One attempt of an op: its request started under a fresh AbortController, and its answer carried
// out — delivered (its follow-up enqueued), or what the retry policy decided for a failure.

import { type Logger, safeLog } from "@telepace/core";
import type { FailureVerdict } from "./classify.js";
import { publish } from "./events.js";
import { type Entry, isPaced, type Lane } from "./lane.js";
import type { OutboxOperation } from "./operation.js";
import type { ResolvedOutboxOptions } from "./outbox-options.js";
import type { MutableCounters } from "./outbox-snapshot.js";
import type { OutboxOutcome } from "./outcome.js";
import type { PendingOps } from "./pending-ops.js";
import { retryAfterFrom } from "./retry-after.js";
import { decideRetry } from "./retry-policy.js";
import type { Scheduler } from "./scheduler.js";
import { errorLabel, failedOutcome, type Settlement } from "./settlement.js";

/** What an attempt asks of the outbox it runs for. */
export interface AttemptHost {
  /** Whether the outbox still sends what is pending (open, or closing with drain). */
  isSending(): boolean;
  /** Enqueues a delivered op's follow-up, accepted even while draining. */
  enqueueFollowUp(op: OutboxOperation<unknown>): Promise<OutboxOutcome<unknown>>;
  /** Fails every pending op of the lane, as not delivered. */
  failLane(lane: Lane, error: unknown): void;
  /** Fails every pending op, as not delivered. */
  failAll(error: unknown): void;
  /** An attempt ended: the outbox may be done closing. */
  checkIdle(): void;
}

/** The parts of the outbox an attempt works on. */
export interface AttemptParts {
  readonly options: ResolvedOutboxOptions;
  readonly counters: MutableCounters;
  readonly pending: PendingOps;
  readonly inFlight: Set<Entry>;
  readonly scheduler: Scheduler;
  readonly settlement: Settlement;
}

type Attempt =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown };

/** Runs attempts: at most one per lane, each ending in a delivery, a requeue or a settlement. */
export class AttemptRunner {
  readonly #options: ResolvedOutboxOptions;
  readonly #logger: Logger;
  readonly #counters: MutableCounters;
  readonly #pending: PendingOps;
  readonly #inFlight: Set<Entry>;
  readonly #scheduler: Scheduler;
  readonly #settlement: Settlement;
  readonly #host: AttemptHost;

  constructor(parts: AttemptParts, host: AttemptHost) {
    this.#options = parts.options;
    this.#logger = parts.options.logger;
    this.#counters = parts.counters;
    this.#pending = parts.pending;
    this.#inFlight = parts.inFlight;
    this.#scheduler = parts.scheduler;
    this.#settlement = parts.settlement;
    this.#host = host;
  }

  /** Starts the lane's head: the pacing store granted it a slot. */
  start(lane: Lane, now: number): void {
    const entry = this.#pending.shift(lane);
    entry.state = "in-flight";
    entry.attempts++;
    entry.startedAt = now;
    lane.inFlight = entry;
    this.#inFlight.add(entry);
    this.#counters.executed++;
    if (isPaced(entry) && lane.pacing.intervalMs > 0) {
      lane.nextAt = now + lane.pacing.intervalMs;
    }
    const controller = new AbortController();
    entry.controller = controller;
    publish("started", () => ({
      type: "started",
      key: entry.key,
      chat: lane.chatKey,
      attempt: entry.attempts,
      waitedMs: now - entry.queuedAt,
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
    const now = this.#options.clock.now();
    this.#scheduler.recordDuration(now, now - entry.startedAt);
    const returned429 = attempt.ok ? retryAfterFrom(attempt.value) : undefined;
    const outcome: Attempt =
      returned429 === undefined ? attempt : { ok: false, error: returned429 };

    if (outcome.ok) {
      lane.transientFailures = 0;
      if (entry.state !== "settled") this.#deliver(entry, outcome.value);
    } else {
      this.#onFailure(entry, outcome.error, this.#classify(entry, outcome.error), now);
    }
    this.#scheduler.place(lane);
    // A place in flight is free: other ready chats may start even if this one has nothing left.
    this.#scheduler.wake();
    this.#host.checkIdle();
  }

  #classify(entry: Entry, error: unknown): FailureVerdict {
    try {
      return this.#options.classify(error, { idempotent: entry.op.idempotent ?? false });
    } catch (classifierError) {
      safeLog(
        this.#logger,
        "error",
        { error: errorLabel(classifierError) },
        "classifyFailure threw",
      );
      return { action: "fail", scope: "op", maybeDelivered: false };
    }
  }

  /** Carries out the retry policy's decision for a failed attempt. */
  #onFailure(entry: Entry, error: unknown, verdict: FailureVerdict, now: number): void {
    const lane = entry.lane;
    const { hold, op } = decideRetry(
      {
        verdict,
        error,
        attempts: entry.attempts,
        isSettled: entry.state === "settled",
        isSuperseded: lane.byIdentity.has(entry.identity),
        isSending: this.#host.isSending(),
        hasChat: lane.chatKey !== undefined,
        transientFailures: lane.transientFailures,
      },
      this.#options,
    );
    this.#scheduler.hold(lane, hold, now);
    if (hold.kind === "freeze") this.#rateLimited(entry, hold.scope, hold.retryAfterMs);
    switch (op.action) {
      case "none":
        return;
      case "settle":
        this.#settlement.settle(entry, op.outcome);
        return;
      case "requeue":
        this.#requeue(entry, op.reason, op.delayMs);
        return;
      case "fail":
        this.#settlement.settle(entry, failedOutcome(op.error, entry.attempts, op.maybeDelivered));
        if (op.scope === "chat") this.#host.failLane(lane, op.error);
        else if (op.scope === "all") {
          this.#host.failAll(op.error);
        }
        return;
    }
  }

  /** Counts, publishes and logs a 429 (the scheduler holds its chat). */
  #rateLimited(entry: Entry, scope: "chat" | "global", retryAfterMs: number): void {
    const chat = entry.lane.chatKey;
    this.#counters.rateLimited++;
    publish("rate-limited", () => ({
      type: "rate-limited",
      key: entry.key,
      chat,
      retryAfterMs,
      scope,
    }));
    safeLog(
      this.#logger,
      "warn",
      { chat, key: entry.key, retryAfterMs, scope },
      "rate limited (429)",
    );
  }

  /** Puts a failed attempt back in its place in line. */
  #requeue(entry: Entry, reason: "rate-limited" | "transient", delayMs: number): void {
    const lane = entry.lane;
    this.#pending.add(entry);
    this.#counters.retries++;
    publish("retry-scheduled", () => ({
      type: "retry-scheduled",
      key: entry.key,
      chat: lane.chatKey,
      attempt: entry.attempts,
      delayMs,
      reason,
    }));
    safeLog(
      this.#logger,
      "debug",
      { chat: lane.chatKey, key: entry.key, delayMs, reason },
      "op requeued",
    );
  }

  #deliver(entry: Entry, result: unknown): void {
    let followUp: Promise<OutboxOutcome<unknown>> | undefined;
    const next = entry.op.followUp;
    if (next !== undefined) {
      try {
        const op = next(result);
        if (op !== undefined) followUp = this.#host.enqueueFollowUp(op);
      } catch (error) {
        safeLog(
          this.#logger,
          "error",
          { error: errorLabel(error), key: entry.key },
          "followUp threw",
        );
        followUp = Promise.resolve(failedOutcome(error, 0, false));
      }
    }
    this.#settlement.settle(entry, {
      status: "delivered",
      result,
      notModified: false,
      attempts: entry.attempts,
      ...(followUp === undefined ? {} : { followUp }),
    });
  }
}

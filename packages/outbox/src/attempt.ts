// One attempt of an op: its request started under a fresh AbortController, and its answer carried
// out — delivered (its follow-up enqueued), or what the retry policy decided for a failure. What
// the scheduler must know of it is returned, never applied here: the outbox hands it on.

import { type Logger, safeLog } from "@telepace/core";
import type { FailureVerdict } from "./classify.js";
import { publish } from "./events.js";
import type { AttemptEnd, Entry, Lane } from "./lane.js";
import type { OutboxOperation } from "./operation.js";
import type { ResolvedOutboxOptions } from "./outbox-options.js";
import type { MutableCounters } from "./outbox-snapshot.js";
import type { OutboxOutcome } from "./outcome.js";
import type { PendingOps } from "./pending-ops.js";
import { retryAfterFrom } from "./retry-after.js";
import { decideRetry, type Hold } from "./retry-policy.js";
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
}

/** The parts of the outbox an attempt works on. */
export interface AttemptParts {
  readonly options: ResolvedOutboxOptions;
  readonly counters: MutableCounters;
  readonly pending: PendingOps;
  readonly settlement: Settlement;
}

/** An attempt's answer, as {@link AttemptRunner.start} resolves it. */
export type AttemptAnswer = { readonly entry: Entry } & (
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown }
);

const RESET_FAILURES: Hold = Object.freeze({ kind: "reset-failures" });

/** Runs attempts: at most one per lane, each ending in a delivery, a requeue or a settlement. */
export class AttemptRunner {
  readonly #options: ResolvedOutboxOptions;
  readonly #logger: Logger;
  readonly #counters: MutableCounters;
  readonly #pending: PendingOps;
  readonly #settlement: Settlement;
  readonly #host: AttemptHost;

  constructor(parts: AttemptParts, host: AttemptHost) {
    this.#options = parts.options;
    this.#logger = parts.options.logger;
    this.#counters = parts.counters;
    this.#pending = parts.pending;
    this.#settlement = parts.settlement;
    this.#host = host;
  }

  /**
   * Starts the lane's head (the pacing store granted it a slot at `now`); resolves with its answer
   * for {@link AttemptRunner.finish}.
   */
  start(lane: Lane, now: number): Promise<AttemptAnswer> {
    const entry = this.#pending.shift(lane);
    entry.state = "in-flight";
    entry.attempts++;
    entry.startedAt = now;
    lane.inFlight = entry;
    this.#counters.executed++;
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
    return running.then(
      (value): AttemptAnswer => ({ entry, ok: true, value }),
      (error: unknown): AttemptAnswer => ({ entry, ok: false, error }),
    );
  }

  /**
   * Carries out an attempt's answer: the op is delivered, requeued in its place or settled as the
   * retry policy decides. Returns what the scheduler must apply to the op's lane.
   */
  finish(answer: AttemptAnswer): AttemptEnd {
    const { entry } = answer;
    const lane = entry.lane;
    lane.inFlight = undefined;
    entry.controller = undefined;
    const endedAt = this.#options.clock.now();
    const durationMs = endedAt - entry.startedAt;
    const returned429 = answer.ok ? retryAfterFrom(answer.value) : undefined;
    if (answer.ok && returned429 === undefined) {
      if (entry.state !== "settled") this.#deliver(entry, answer.value);
      return { lane, hold: RESET_FAILURES, endedAt, durationMs };
    }
    const error = answer.ok ? returned429 : answer.error;
    const hold = this.#onFailure(entry, error, this.#classify(entry, error));
    return { lane, hold, endedAt, durationMs };
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

  /** Carries out the retry policy's decision for a failed attempt; returns how to hold its lane. */
  #onFailure(entry: Entry, error: unknown, verdict: FailureVerdict): Hold {
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
    if (hold.kind === "freeze") this.#rateLimited(entry, hold.scope, hold.retryAfterMs);
    switch (op.action) {
      case "none":
        break;
      case "settle":
        this.#settlement.settle(entry, op.outcome);
        break;
      case "requeue":
        this.#requeue(entry, op.reason, op.delayMs);
        break;
      case "fail":
        this.#settlement.settle(entry, failedOutcome(op.error, entry.attempts, op.maybeDelivered));
        if (op.scope === "chat") this.#host.failLane(lane, op.error);
        else if (op.scope === "all") this.#host.failAll(op.error);
        break;
    }
    return hold;
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

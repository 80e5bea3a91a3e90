// The typed outcomes of the dispatcher's calls: where a classic dispatcher logs "rejected" or
// "dropped", a caller gets a value it can switch on.

import type { Update } from "@grammyjs/types";
import { KEY_KINDS, type KeyKind } from "./dispatch-key.js";

/**
 * Why an update was not accepted.
 * - `principal-queue-full` — its principal already has `maxQueuedPerPrincipal` updates waiting.
 * - `active-principals-full` — it needs a new principal and `maxActivePrincipals` are active.
 * - `waiting-full` — `wait: true`, but `maxWaitingEnqueues` calls are already waiting.
 * - `closed` — `close()` was called.
 */
export type RejectReason =
  | "principal-queue-full"
  | "active-principals-full"
  | "waiting-full"
  | "closed";

/** Every {@link RejectReason}, in a fixed order (used to build per-reason counters). */
export const REJECT_REASONS: readonly RejectReason[] = Object.freeze([
  "principal-queue-full",
  "active-principals-full",
  "waiting-full",
  "closed",
]);

/**
 * What {@link UpdateDispatcher.enqueue} resolves with.
 * - `accepted` — queued behind its principal's earlier updates; it will be processed (or handed
 *   back by `close()`). `keyKind` says which class of principal it was keyed by.
 * - `duplicate` — an update with the same `update_id` is queued, waiting, running, or finished
 *   within the dedupe window; this one is dropped and will not be processed.
 * - `rejected` — not accepted; the caller still owns the update.
 */
export type EnqueueResult =
  | { readonly status: "accepted"; readonly keyKind: KeyKind }
  | { readonly status: "duplicate" }
  | { readonly status: "rejected"; readonly reason: RejectReason };

/**
 * How one processor call ended: `succeeded` (resolved or returned), `failed` (rejected), `threw`
 * (threw synchronously), `timed-out` (its `timeoutMs` elapsed first) or `interrupted` (`close()`
 * gave up on it).
 */
export type ProcessOutcome = "succeeded" | "failed" | "threw" | "timed-out" | "interrupted";

/** What {@link UpdateDispatcher.drain} resolves with. */
export interface DrainResult {
  /** `idle`: nothing queued, waiting or running. `timed-out`: the deadline came first. */
  readonly status: "idle" | "timed-out";
}

/** What {@link UpdateDispatcher.close} resolves with. */
export interface CloseResult {
  /**
   * `drained`: every accepted update finished within the grace period. `timed-out`: the grace
   * period ended (deadline or signal) with work left, which is listed below.
   */
  readonly status: "drained" | "timed-out";
  /**
   * Accepted updates that never started, in the order they were enqueued (so per-principal order
   * holds). Persist or re-enqueue them; the watermark stays below them.
   */
  readonly unstarted: readonly Update[];
  /**
   * Updates whose processor was still running when the grace period ended; their signals were
   * aborted with `ERR_DISPATCHER_CLOSED`. The watermark stays below them too.
   */
  readonly interrupted: readonly Update[];
}

// Results are immutable and carry no per-call data, so each one is allocated once.

/** The `accepted` result for each key kind. */
export const ACCEPTED: Readonly<Record<KeyKind, EnqueueResult>> = Object.freeze(
  Object.fromEntries(
    KEY_KINDS.map((keyKind) => [keyKind, Object.freeze({ status: "accepted", keyKind })]),
  ) as Record<KeyKind, EnqueueResult>,
);

/** The `duplicate` result. */
export const DUPLICATE: EnqueueResult = Object.freeze({ status: "duplicate" });

/** The `rejected` result for each reason. */
export const REJECTED: Readonly<Record<RejectReason, EnqueueResult>> = Object.freeze(
  Object.fromEntries(
    REJECT_REASONS.map((reason) => [reason, Object.freeze({ status: "rejected", reason })]),
  ) as Record<RejectReason, EnqueueResult>,
);

// Settled promises are immutable too, so `enqueue` hands out one shared promise per result
// instead of allocating one per call.

/** `Promise.resolve(ACCEPTED[kind])` for each key kind. */
export const ACCEPTED_PROMISE: Readonly<Record<KeyKind, Promise<EnqueueResult>>> = Object.freeze(
  Object.fromEntries(
    KEY_KINDS.map((keyKind) => [keyKind, Promise.resolve(ACCEPTED[keyKind])]),
  ) as Record<KeyKind, Promise<EnqueueResult>>,
);

/** `Promise.resolve(DUPLICATE)`. */
export const DUPLICATE_PROMISE: Promise<EnqueueResult> = Promise.resolve(DUPLICATE);

// The shape of UpdateDispatcher.snapshot(): live gauges and monotonic counters, safe to export as
// metrics (no ids of users or chats, no update content).

import type { KeyKind } from "./dispatch-key.js";
import type { RejectReason } from "./results.js";

/** A fresh, frozen snapshot returned by {@link UpdateDispatcher.snapshot}. */
export interface UpdateDispatchSnapshot {
  /** Accepted updates not yet started (in principal queues or waiting for a processor slot). */
  readonly queued: number;
  /** {@link UpdateDispatchSnapshot.queued} split by the kind of principal. */
  readonly queuedByKind: Readonly<Record<KeyKind, number>>;
  /** Principals with work queued or running (bounded by `maxActivePrincipals`). */
  readonly activePrincipals: number;
  /** Processors running now (bounded by `maxConcurrency`). */
  readonly inFlight: number;
  /** `enqueue(…, { wait: true })` calls waiting for capacity. */
  readonly waiting: number;
  /**
   * Processors the dispatcher gave up on (timed out or interrupted by close) whose promise has not
   * settled yet: work that ignores its signal shows up here.
   */
  readonly abandoned: number;
  /** The safe offset watermark; see {@link UpdateDispatcher.watermark}. */
  readonly watermark: number | undefined;
  /** Whether `close()` was called. */
  readonly isClosed: boolean;
  /** Updates accepted, ever. */
  readonly accepted: number;
  /** Enqueues answered `duplicate`, ever. */
  readonly duplicates: number;
  /** Processor calls that resolved or returned, ever. */
  readonly succeeded: number;
  /** Processor calls that rejected or threw (synchronously or not), ever. */
  readonly failed: number;
  /** Processor calls that exceeded `timeoutMs`, ever. */
  readonly timedOut: number;
  /** Processor calls still running when `close()` gave up, ever. */
  readonly interrupted: number;
  /** Enqueues answered `rejected`, ever, by reason. */
  readonly rejected: Readonly<Record<RejectReason, number>>;
}

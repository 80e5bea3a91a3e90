// What schedulers and transfers need from the registry that owns them, kept as a narrow internal
// contract so the registry's public class exposes none of it.

import type { Clock } from "@telepace/core";
import type { MediaDc, MediaDirection } from "./kinds.js";
import type { MediaSchedulerLogger, ResolvedLimits } from "./options.js";
import type { MediaScheduler } from "./scheduler.js";
import type { MediaTransfer } from "./transfer.js";

/** Monotonic counters, mutated in place by the parts of one registry. @internal */
export interface MutableCounters {
  transfersOpened: number;
  transfersClosed: number;
  grants: number;
  releases: number;
  aborted: number;
  rejectedClosed: number;
  rejectedQueueFull: number;
  rejectedOverBudget: number;
  rebinds: number;
  schedulersCreated: number;
  schedulersEvicted: number;
}

/** The registry as its schedulers and transfers see it. @internal */
export interface RegistryHost {
  readonly clock: Clock;
  readonly logger: MediaSchedulerLogger | undefined;
  readonly counters: MutableCounters;
  /** Replaced as a whole by `configure()`. */
  limits: ResolvedLimits;
  /** Acquires waiting across every scheduler (bounded by `limits.maxQueuedAcquires`). */
  queuedRequests: number;
  nextPermitId(): number;
  /** The scheduler of (dc, direction), created on first use. */
  schedulerFor(dc: MediaDc, direction: MediaDirection): MediaScheduler;
  /** A scheduler has no binding left: evict it. */
  onSchedulerEmpty(scheduler: MediaScheduler): void;
  onTransferClosed(transfer: MediaTransfer): void;
}

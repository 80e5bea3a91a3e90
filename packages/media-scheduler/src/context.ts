// The state one registry shares with its schedulers and transfers: plain data (clock, logger,
// counters, the limits in force, the registry-wide queue count) and no reference back to the
// registry, so none of its parts can reach another's internals.

import type { Clock, Logger } from "@telepace/core";
import type { ResolvedLimits } from "./options.js";

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

/** What every scheduler and transfer of one registry reads and updates. @internal */
export interface RegistryContext {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly counters: MutableCounters;
  /** Replaced as a whole by `configure()`. */
  limits: ResolvedLimits;
  /** Acquires waiting across every scheduler (bounded by `limits.maxQueuedAcquires`). */
  queuedRequests: number;
  /** The last permit id handed out. */
  lastPermitId: number;
  /** Set once by `registry.close()`: nothing is granted any more. */
  isClosed: boolean;
}

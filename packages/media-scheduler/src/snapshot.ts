// The shapes of the frozen, point-in-time snapshots that registry, scheduler and transfer return.

import type { MediaDc, MediaDirection, MediaPriority, MediaSizeClass } from "./kinds.js";

/**
 * Where a transfer stands at one scheduler:
 * - `idle`: nothing queued, no live permit;
 * - `waiting-for-slot`: requests queued, but its size class has no free active slot;
 * - `queued`: requests queued and in the grant rotation (or, for a large transfer, waiting for
 *   the large-class bytes `maxLargeBytesInFlight` to come back);
 * - `active`: live permits and nothing queued.
 * (A transfer with live permits and queued requests is `queued`.)
 */
export type MediaBindingState = "idle" | "waiting-for-slot" | "queued" | "active";

/** One transfer as seen by one scheduler. */
export interface MediaSchedulerTransferSnapshot {
  readonly transferId: string;
  readonly sizeClass: MediaSizeClass;
  readonly state: MediaBindingState;
  /** Whether this is the transfer's current binding (false: draining after a rebind or close). */
  readonly isCurrent: boolean;
  /** Priority of the head request, when one is queued. */
  readonly headPriority: MediaPriority | undefined;
  readonly queuedRequests: number;
  readonly queuedBytes: number;
  readonly livePermits: number;
  readonly activeBytes: number;
  /** Grants made to this transfer at this scheduler. */
  readonly grants: number;
  /** Bytes charged by those grants. */
  readonly grantedBytes: number;
  /** Deficit round robin credit left in its current turn, in bytes (0 when nothing is queued). */
  readonly deficitBytes: number;
}

/** One scheduler: a (data centre, direction) budget. */
export interface MediaSchedulerSnapshot {
  readonly dc: MediaDc;
  readonly direction: MediaDirection;
  readonly maxBytesInFlight: number;
  /** Bytes large transfers may hold together (at most `maxBytesInFlight` takes effect). */
  readonly maxLargeBytesInFlight: number;
  /** Sum of the charges of live permits. */
  readonly activeBytes: number;
  /** Sum of the charges of live permits of large transfers. */
  readonly largeActiveBytes: number;
  /** Sum of the charges of waiting acquires. */
  readonly queuedBytes: number;
  readonly queuedRequests: number;
  readonly maxActiveSmallTransfers: number;
  readonly maxActiveLargeTransfers: number;
  /** Small transfers holding an active slot. */
  readonly smallSlotsInUse: number;
  /** Large transfers holding an active slot. */
  readonly largeSlotsInUse: number;
  /** Transfers with queued requests waiting for a slot of their size class. */
  readonly transfersWaitingForSlot: number;
  /** Large transfers whose next request waits for large-class bytes. */
  readonly transfersWaitingForLargeBytes: number;
  /** Transfers with at least one live permit. */
  readonly activeTransfers: number;
  /** Transfers with at least one queued request. */
  readonly queuedTransfers: number;
  /** The deficit round robin quantum: the largest charge requested here so far, in bytes. */
  readonly quantumBytes: number;
  /** Foreground grants made since a background request last got one, while one waited. */
  readonly foregroundGrantsSinceBackground: number;
  /** Grants over the scheduler's life. */
  readonly grants: number;
  /** Bytes charged over the scheduler's life. */
  readonly grantedBytes: number;
  /** Releases over the scheduler's life. */
  readonly releases: number;
  /** Every transfer bound here (current and draining). */
  readonly transfers: readonly MediaSchedulerTransferSnapshot[];
}

/** One transfer across its bindings. */
export interface MediaTransferSnapshot {
  readonly id: string;
  /** The data centre it is currently bound to. */
  readonly dc: MediaDc;
  readonly direction: MediaDirection;
  readonly sizeBytes: number | undefined;
  readonly sizeClass: MediaSizeClass;
  /** The default priority of its acquires. */
  readonly priority: MediaPriority;
  readonly isClosed: boolean;
  readonly queuedRequests: number;
  readonly queuedBytes: number;
  /** Live permits at every binding, current and draining. */
  readonly livePermits: number;
  readonly activeBytes: number;
  readonly grants: number;
  readonly grantedBytes: number;
  /** Deficit at the current binding, in bytes. */
  readonly deficitBytes: number;
  /** Data centres where permits granted before a rebind are still draining. */
  readonly drainingDcs: readonly MediaDc[];
}

/** Monotonic counters of a registry. */
export interface MediaSchedulerCounters {
  readonly transfersOpened: number;
  readonly transfersClosed: number;
  readonly grants: number;
  readonly releases: number;
  /** Waiting acquires removed by their signal (before or right after the grant). */
  readonly aborted: number;
  /** Waiting acquires rejected because their transfer closed. */
  readonly rejectedClosed: number;
  /** Acquires rejected with `ERR_QUEUE_FULL`. */
  readonly rejectedQueueFull: number;
  /** Waiting acquires rejected because `configure()` shrank the budget below their charge. */
  readonly rejectedOverBudget: number;
  readonly rebinds: number;
  readonly schedulersCreated: number;
  readonly schedulersEvicted: number;
}

/** The whole registry. */
export interface MediaSchedulerRegistrySnapshot {
  readonly isClosed: boolean;
  readonly openTransfers: number;
  /** Acquires waiting across every scheduler. */
  readonly queuedRequests: number;
  readonly maxQueuedAcquires: number;
  readonly backgroundGrantInterval: number;
  readonly counters: MediaSchedulerCounters;
  readonly schedulers: readonly MediaSchedulerSnapshot[];
}

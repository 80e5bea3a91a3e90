// Where a broadcast's progress lives: the broadcast (its message's fingerprint, state, counts of
// finished batches, where the recipients end) and, per batch of positions being sent, a record
// per position — started before its request goes out, its outcome once known. Batches are
// claimed with a lease, so several processes can share one broadcast and a dead one's batch is
// taken over.

import type { BroadcastCounts, PositionRecord } from "./outcome.js";

/** A broadcast's state in its store. */
export type BroadcastState = "running" | "paused" | "cancelled" | "completed";

/** What a store keeps of a broadcast as a whole. */
export interface BroadcastRecord {
  readonly id: string;
  /** Of the message: a start with another message under this id is a conflict. */
  readonly fingerprint: string;
  /** Positions per batch, fixed when the broadcast was created. */
  readonly batchSize: number;
  readonly state: BroadcastState;
  /** The number of recipients once known (the source ended, or the caller said), else undefined. */
  readonly end: number | undefined;
  /** The first batch no one has claimed yet. */
  readonly nextBatch: number;
  /** Counts of the finished batches. */
  readonly counts: BroadcastCounts;
  /** Batches claimed and not finished yet (by any process). */
  readonly openBatches: number;
}

/** What a broadcast is created with. */
export interface BroadcastDefinition {
  readonly fingerprint: string;
  readonly batchSize: number;
  /** The number of recipients, when known up front. */
  readonly end: number | undefined;
}

/** A batch of positions claimed by one worker. */
export interface BatchClaim {
  readonly id: string;
  readonly batch: number;
  /** First position of the batch. */
  readonly from: number;
  /** One past its last position (the recipients may end before). */
  readonly to: number;
  /** Names this claim: every write of the batch carries it, and is refused once the lease is lost. */
  readonly token: string;
  /**
   * What earlier holders recorded for positions of this batch: a batch taken over from a process
   * that died (or paused) has its started and settled positions here. Empty for a fresh batch.
   */
  readonly recorded: ReadonlyMap<number, PositionRecord>;
}

/** The answer to {@link BroadcastStore.claim}. */
export type ClaimResult =
  | { readonly status: "claimed"; readonly claim: BatchClaim }
  /** Nothing to claim now: every open batch is leased (ask again in `retryInMs`). */
  | { readonly status: "wait"; readonly retryInMs: number; readonly record: BroadcastRecord }
  /** The broadcast is paused, cancelled or completed: nothing to claim. */
  | { readonly status: "stopped"; readonly record: BroadcastRecord };

/**
 * A broadcast's durable progress. Every write resolves once it is durable as far as the store
 * goes (synced to disk; acknowledged by Redis); the broadcast sends a request only after its
 * position's `markStarted` resolved.
 */
export interface BroadcastStore {
  /** Whether several processes can share a broadcast through this store (leases matter). */
  readonly isShared: boolean;
  /**
   * Creates the broadcast with `definition`, or reads it when it exists.
   * @throws {BroadcastError} `ERR_BROADCAST_CONFLICT` when it exists with another fingerprint.
   */
  open(id: string, definition: BroadcastDefinition): Promise<BroadcastRecord>;
  /** The broadcast as stored, or `undefined` when there is none under `id`. */
  read(id: string): Promise<BroadcastRecord | undefined>;
  /**
   * Claims a batch for `worker` for `leaseMs`: one whose holder's lease ran out (a dead process's,
   * lowest first), else the next unclaimed one. Marks the broadcast completed when the recipients
   * ended and no batch is open.
   */
  claim(id: string, worker: string, leaseMs: number): Promise<ClaimResult>;
  /** Extends a claim's lease; false when it was lost (taken over, or the broadcast was stopped). */
  renew(claim: BatchClaim, leaseMs: number): Promise<boolean>;
  /**
   * Records that the send to `position` starts.
   * @throws {BroadcastError} `ERR_BROADCAST_LEASE_LOST` when the batch is no longer this claim's.
   */
  markStarted(claim: BatchClaim, position: number): Promise<void>;
  /**
   * Records that the request of `position` was answered without delivering anything (a 429, a
   * connection that never opened): it is no longer in flight, and a crash before it is sent again
   * must not count it as maybe delivered. Its next attempt calls `markStarted` again.
   * @throws {BroadcastError} `ERR_BROADCAST_LEASE_LOST` when the batch is no longer this claim's.
   */
  markUnsent(claim: BatchClaim, position: number): Promise<void>;
  /**
   * Records a position's outcome.
   * @throws {BroadcastError} `ERR_BROADCAST_LEASE_LOST` when the batch is no longer this claim's.
   */
  markSettled(claim: BatchClaim, position: number, record: PositionRecord): Promise<void>;
  /**
   * Finishes a batch whose positions are all settled: their outcomes join the counts and their
   * records go. `end`: the recipients ended at this position, inside the batch.
   * @throws {BroadcastError} `ERR_BROADCAST_LEASE_LOST` when the batch is no longer this claim's.
   */
  complete(claim: BatchClaim, end: number | undefined): Promise<BroadcastRecord>;
  /** Gives a batch back unfinished (a pause, a shutdown): the next claim takes it over at once. */
  release(claim: BatchClaim): Promise<void>;
  /** Sets the broadcast's state: `paused`, `running` again, or `cancelled`. */
  setState(id: string, state: "running" | "paused" | "cancelled"): Promise<BroadcastRecord>;
}

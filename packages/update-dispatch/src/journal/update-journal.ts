// The UpdateJournal contract: where an intake stores updates before it confirms them to Telegram,
// so that confirming the offset and finishing the work are two separate things.

import type { Update } from "@grammyjs/types";

/** What {@link UpdateJournal.append} did with a batch. */
export interface AppendResult {
  /** Updates stored by this call, in the order given. */
  readonly appended: readonly Update[];
  /** Updates skipped because their `update_id` was stored before (finished or not). */
  readonly duplicates: number;
}

/** A JSON value an application keeps in the journal's state (see {@link UpdateJournal.putState}). */
export type JournalStateValue =
  | string
  | number
  | boolean
  | null
  | readonly JournalStateValue[]
  | { readonly [key: string]: JournalStateValue };

/** A live view of a journal, for `snapshot()`s and reports. */
export interface JournalSnapshot {
  /** Which implementation this is, e.g. `"memory"` or `"file"`; shown in logs and reports. */
  readonly kind: string;
  /** Whether an appended update survives a crash of the process (`kill -9`). */
  readonly isDurable: boolean;
  /** Stored updates not yet finished. */
  readonly unfinished: number;
  /** The highest `update_id` ever stored, or `undefined` before the first append. */
  readonly highestUpdateId: number | undefined;
}

/**
 * Stores updates between `getUpdates` (or a webhook) and their processing.
 *
 * The contract every implementation keeps:
 * - `append` is idempotent by `update_id`: an id stored before — finished or not, compacted or
 *   not, as long as it is not below {@link highestUpdateId} minus the implementation's documented
 *   dedupe horizon — is a duplicate, not stored twice. When its promise resolves, the batch is as
 *   durable as the implementation promises (a durable journal: on disk, synced).
 * - `finish` marks stored updates as done (succeeded, failed or timed out: anything that must
 *   not run again), one id or several in one call. Finishing an unknown or finished id is a
 *   no-op.
 * - `unfinished` lists stored, unfinished updates in arrival order; `unfinishedIds` lists only
 *   their ids, and `read` brings back the ones asked for by id. The intake holds at most
 *   `maxUnfinished` updates in memory and leaves the rest in the journal until their turn
 *   comes, and after a restart it pages through `unfinishedIds` instead of loading every stored
 *   update at once; a journal that keeps its updates outside the process's memory keeps only
 *   their ids (and where they are) in it.
 * - `highestUpdateId` survives compaction and restarts: the intake confirms `highestUpdateId + 1`.
 * - `restartIds` starts a new numbering: Telegram picks the next `update_id` at random after a
 *   week without updates, often below the last one, so ids stored before would hide new updates
 *   as duplicates. It forgets every stored id and `highestUpdateId` (which reads `undefined` until
 *   the next append), as durably as `append`; application state is kept. It rejects, changing
 *   nothing, while any stored update is unfinished: a new id could then collide with one of them.
 * - `putState`/`deleteState`/`state` keep a few small JSON records for the application (for
 *   example the jobs it is running), with the same durability as appends.
 * - Every method rejects after `close()` with the implementation's closed error.
 */
export interface UpdateJournal {
  /** Stores a batch; resolves once it is as durable as the journal promises. */
  append(updates: readonly Update[]): Promise<AppendResult>;
  /**
   * Marks updates finished (one id, or several: one call for a batch is cheaper); they are never
   * replayed.
   */
  finish(updateIds: number | readonly number[]): Promise<void>;
  /** Stored, unfinished updates in arrival order (all of them: see {@link read} for a few). */
  unfinished(): Promise<readonly Update[]>;
  /** The ids of the stored, unfinished updates in arrival order, without the updates. */
  unfinishedIds(): Promise<readonly number[]>;
  /**
   * The stored, unfinished updates with these ids, in the order asked; ids not stored, finished
   * or asked twice are left out (once). Appends and finishes may run meanwhile.
   */
  read(updateIds: readonly number[]): Promise<readonly Update[]>;
  /** The highest `update_id` ever stored (the intake confirms this + 1), or `undefined`. */
  highestUpdateId(): Promise<number | undefined>;
  /**
   * Forgets every stored id and the highest one, for a new numbering of update ids; rejects while
   * an update is unfinished (see the contract above).
   */
  restartIds(): Promise<void>;
  /** Drops finished entries from storage; what `unfinished` and `highestUpdateId` say is kept. */
  compact(): Promise<void>;
  /** Stores (replaces) one application record. */
  putState(key: string, value: JournalStateValue): Promise<void>;
  /** Removes one application record; removing a missing key is a no-op. */
  deleteState(key: string): Promise<void>;
  /** Every application record, as stored. */
  state(): Promise<ReadonlyMap<string, JournalStateValue>>;
  /** A fresh frozen view. */
  snapshot(): JournalSnapshot;
  /** Flushes and releases the storage. Idempotent. */
  close(): Promise<void>;
}

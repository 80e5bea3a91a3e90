// The typed outcomes and the snapshot of UpdateIntake: what a webhook handler switches on, what
// close() leaves behind, and the live counters of polling.

import type { UpdateDispatchSnapshot } from "../dispatcher/snapshot.js";
import type { JournalSnapshot } from "../journal/update-journal.js";

/**
 * What {@link UpdateIntake.accept} resolves with, and what a webhook handler answers Telegram:
 * - `stored` — the journal holds it now; answer 200.
 * - `duplicate` — its `update_id` was stored before (a retry); answer 200.
 * - `busy` — `maxUnfinished` stored updates are unfinished; answer 503 (or 429) so Telegram
 *   sends it again later. Nothing was stored.
 * - `closed` — the intake is closing; answer 503. Nothing was stored.
 */
export type AcceptResult =
  | { readonly status: "stored" }
  | { readonly status: "duplicate" }
  | { readonly status: "busy" }
  | { readonly status: "closed" };

/**
 * What the intake is doing:
 * - `idle` — not polling (before `run()`, after its signal aborted, or a webhook intake).
 * - `replaying` — reading unfinished updates from the journal to dispatch them first.
 * - `polling` — a `getUpdates` call is in flight, or its batch is being stored.
 * - `paused` — `maxUnfinished` reached: no fetching until processing frees room.
 * - `backing-off` — waiting after a 429, a transient failure or a failed append.
 * - `restarting` — the update ids restarted lower: waiting for the old numbering's unfinished
 *   updates to finish, then the journal forgets the old ids.
 * - `stopped` — polling ended with a `PollingStoppedError` (409, 401, 404) or, with
 *   `journalFailure: "reject"`, a failed append.
 * - `closing`, `closed` — `close()` was called / has finished.
 */
export type IntakeState =
  | "idle"
  | "replaying"
  | "polling"
  | "paused"
  | "backing-off"
  | "restarting"
  | "stopped"
  | "closing"
  | "closed";

/** What {@link UpdateIntake.close} resolves with. */
export interface IntakeCloseResult {
  /** `drained`: the dispatcher finished everything in time. `timed-out`: the deadline came first. */
  readonly status: "drained" | "timed-out";
  /**
   * Stored updates that did not finish (never started, or interrupted at the deadline). They stay
   * in a journal you passed in, and its next intake replays them; the default memory journal
   * goes with the intake.
   */
  readonly unfinished: number;
}

/** A fresh, frozen view of {@link UpdateIntake}: gauges and monotonic counters. */
export interface UpdateIntakeSnapshot {
  readonly state: IntakeState;
  /** `getUpdates` calls made, ever (probes and confirming calls included). */
  readonly polls: number;
  /** Updates `getUpdates` returned to polls, ever (a confirming call's answer is discarded). */
  readonly fetched: number;
  /** Updates the journal stored as new, ever (polls and `accept`). */
  readonly appended: number;
  /** Updates the journal (or the dispatcher) had seen before, ever; not dispatched again. */
  readonly duplicates: number;
  /** Unfinished updates from the journal dispatched at start. */
  readonly replayed: number;
  /** Stored updates whose processing ended (any outcome) and that the journal marked finished. */
  readonly finished: number;
  /**
   * Stored updates the journal has not marked finished yet (bounded by `maxUnfinished`, plus what
   * replay brought), including processed ones whose finish the journal failed and that are retried.
   */
  readonly unfinished: number;
  /** `accept` calls answered `busy`, ever. */
  readonly busy: number;
  /** Updates without an `update_id` that is an integer >= 0, skipped, ever. */
  readonly invalid: number;
  /** 429s from `getUpdates`, ever. */
  readonly rateLimited: number;
  /** Waits before polling again (429s, transient failures, failed appends), ever. */
  readonly backoffs: number;
  /** Times polling stopped at `maxUnfinished`, ever. */
  readonly pauses: number;
  /** Times the update ids restarted lower and the journal forgot the old ids, ever. */
  readonly idRestarts: number;
  /** Journal calls (appends, finishes, restarts of ids, reads at start) that failed, ever. */
  readonly journalFailures: number;
  /**
   * Milliseconds the journal has been failing now, since the first failed call with no success
   * after it; 0 while it works.
   */
  readonly journalOutageMs: number;
  /**
   * The offset of the last `getUpdates` sent: Telegram forgets the updates below it. It is the
   * highest stored `update_id` + 1, never held back by unfinished work. `undefined` before the
   * first poll with an offset, and right after the update ids restarted.
   */
  readonly confirmedOffset: number | undefined;
  /**
   * How far the confirmed offset runs ahead of the oldest unfinished update (in `update_id`s):
   * the distance a loop confirming only finished work would be stuck behind. 0 when nothing
   * unfinished is below the offset.
   */
  readonly offsetLag: number;
  /** The journal's own view. */
  readonly journal: JournalSnapshot;
  /** The dispatcher's gauges and counters. */
  readonly dispatcher: UpdateDispatchSnapshot;
}

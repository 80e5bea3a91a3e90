// The intake's store side: the journal behind the polling loop and accept(), and what the intake
// keeps beside it — the unfinished ids that count against maxJournalUpdates, one append chain so
// updates reach the hand-over in the journal's order, a replay that reads the journal in pages,
// finishes batched per turn and retried through a journal outage, and the restart of update ids.

import type { Update } from "@grammyjs/types";
import { abortReason, type Clock, type Logger, onAbort, safeLog, type Timer } from "@telepace/core";
import type { PrincipalId } from "../dispatcher/dispatch-key.js";
import type { DispatcherAccess } from "../dispatcher/dispatcher-access.js";
import { withValidIds } from "../journal/update-id.js";
import type { UpdateJournal } from "../journal/update-journal.js";
import { publishIntakeEvent } from "./diagnostics.js";
import { DispatchFeed, type FeedJournal } from "./dispatch-feed.js";
import { safeCodeOf } from "./polling-failure.js";
import type { PollingStore } from "./polling-loop.js";
import { BACKOFF_MAX_MS, BACKOFF_START_MS } from "./polling-options.js";

/** Telegram picks the next `update_id` at random once no update came for a week. */
export const ID_RESTART_QUIET_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * A webhook update this far below the highest stored id starts a new numbering even within the
 * week: a redelivery is of a recent update, and Telegram keeps updates 24 hours at most.
 */
export const WEBHOOK_RESTART_GAP = 100_000;

/** Unfinished updates read from the journal at once during replay. */
const REPLAY_PAGE = 256;

// Fixed log text: no update content, no error message (a journal's may name a path).
const LOG = Object.freeze({
  invalid: "Skipped an update without an integer update_id",
  replayed: "Dispatching unfinished updates from the journal",
  missing: "The journal no longer holds unfinished updates it listed; they cannot be processed",
  failing:
    "The journal failed; the intake keeps trying it with backoff (nothing is confirmed meanwhile)",
  recovered: "The journal works again",
});

function noop(): void {}

/** What {@link IntakeStore} needs from the intake. */
export interface IntakeStoreParts {
  readonly journal: UpdateJournal;
  /** The intake's access to its dispatcher, for the hand-over. */
  readonly access: DispatcherAccess;
  /** Updates in memory at most (`maxUnfinished`). */
  readonly maxUnfinished: number;
  /** Stored, unfinished updates at most (`maxJournalUpdates`). */
  readonly maxJournalUpdates: number;
  /** What one principal takes in the dispatcher (`maxQueuedPerPrincipal` + 1). */
  readonly principalCapacity: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * The journal as the intake uses it. Updates are handed to the dispatcher in the order the
 * journal stored them (through a {@link DispatchFeed}, which leaves what memory does not take in
 * the journal), and each counts against `maxJournalUpdates` from its append until the journal
 * has marked it finished: a finish the journal fails is retried (0.5 s doubling to 30 s, and at
 * once when the journal next works), so an outage holds room instead of leaving updates to run
 * again.
 */
export class IntakeStore implements PollingStore {
  readonly #journal: UpdateJournal;
  readonly #feed: DispatchFeed;
  readonly #maxJournalUpdates: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  // Stored updates the journal has not marked finished, by id: what counts against the bound.
  readonly #unfinished = new Set<number>();
  // Of those, the ones whose processing ended but whose finish the journal failed.
  readonly #unmarked = new Set<number>();
  readonly #finishing = new Set<Promise<void>>();
  // Processing ended this turn; finished in the journal together, in one call.
  #ending: number[] = [];
  readonly #finishTask = (): void => {
    const ids = this.#ending;
    this.#ending = [];
    if (ids.length > 0) this.#markFinished(ids);
  };
  // The lowest unfinished id seen by the last offsetLag, kept while it stays unfinished.
  #lowest: number | undefined;
  // Woken whenever an update leaves #unfinished or an append settles; each re-checks its condition.
  readonly #waiters = new Set<() => void>();
  #reserved = 0;
  #highest: number | undefined;
  #appendTail: Promise<unknown> = Promise.resolve();
  #opening: Promise<void> | undefined;
  #restarting: Promise<void> | undefined;
  #isReplaying = false;
  #isSettled = false;
  #lastStoredAt: number;
  #retryTimer: Timer | undefined;
  #retryDelayMs = BACKOFF_START_MS;
  #outageStartedAt: number | undefined;
  #outageFailures = 0;
  #appended = 0;
  #duplicates = 0;
  #replayed = 0;
  #finished = 0;
  #invalid = 0;
  #journalFailures = 0;

  constructor(parts: IntakeStoreParts) {
    this.#journal = parts.journal;
    this.#maxJournalUpdates = parts.maxJournalUpdates;
    this.#clock = parts.clock;
    this.#logger = parts.logger;
    this.#lastStoredAt = this.#clock.now();
    this.#feed = new DispatchFeed(
      parts.access,
      this.#feedJournal(),
      parts.maxUnfinished,
      parts.principalCapacity,
    );
  }

  /** Counters and gauges for the intake's snapshot. */
  get counts() {
    return {
      appended: this.#appended,
      duplicates: this.#duplicates,
      replayed: this.#replayed,
      finished: this.#finished,
      invalid: this.#invalid,
      unfinished: this.#unfinished.size,
      inMemory: this.#feed.inMemory,
      backlog: this.#feed.waiting,
      readBack: this.#feed.readBack,
      journalFailures: this.#journalFailures,
      journalOutageMs:
        this.#outageStartedAt === undefined ? 0 : this.#clock.now() - this.#outageStartedAt,
    };
  }

  /** Whether the journal's unfinished updates are being read for replay. */
  get isReplaying(): boolean {
    return this.#isReplaying;
  }

  /** Settles when the appends queued so far have. */
  get appending(): Promise<unknown> {
    return this.#appendTail;
  }

  /** Whether `id` is stored and not yet finished. */
  isUnfinished(id: number): boolean {
    return this.#unfinished.has(id);
  }

  /** Room under `maxJournalUpdates`: what the journal may take now. */
  room(): number {
    return this.#maxJournalUpdates - this.#unfinished.size - this.#reserved;
  }

  waitForRoom(signal: AbortSignal): Promise<void> {
    return this.#waitUntil(() => this.room() > 0, signal);
  }

  highestUpdateId(): number | undefined {
    return this.#highest;
  }

  async append(updates: readonly Update[]): Promise<void> {
    await this.store(updates, "poll");
  }

  /**
   * Appends through one chain, so updates are dispatched in the journal's order; resolves how
   * many the journal stored as new. Rejects with the journal's error.
   */
  store(updates: readonly Update[], source: "poll" | "webhook"): Promise<number> {
    this.#reserved += updates.length;
    const appending = this.#appendTail.then(() => this.#journal.append(updates));
    this.#appendTail = appending.catch(noop);
    return appending
      .finally(() => {
        this.#reserved -= updates.length;
        this.#wake();
      })
      .then(
        (result) => {
          this.#journalWorked();
          // Indexed loops here and below: once per batch, often not yet optimised, where `for of`
          // allocates an iterator result per update.
          for (let index = 0; index < updates.length; index++) {
            const id = (updates[index] as Update).update_id;
            if (this.#highest === undefined || id > this.#highest) this.#highest = id;
          }
          const appended = this.#keepValid(result.appended);
          for (let index = 0; index < appended.length; index++) {
            this.#unfinished.add((appended[index] as Update).update_id);
          }
          if (appended.length > 0) this.#lastStoredAt = this.#clock.now();
          this.#appended += appended.length;
          this.#duplicates += result.duplicates;
          publishIntakeEvent("intake-stored", () => ({
            type: "intake-stored",
            source,
            appended: appended.length,
            duplicates: result.duplicates,
          }));
          this.#feed.push(appended);
          return appended.length;
        },
        (error: unknown) => {
          this.#journalFailed(error);
          throw error;
        },
      );
  }

  /** A duplicate the journal has not seen yet (an id it holds unfinished, stored or being stored). */
  countDuplicate(): void {
    this.#duplicates++;
  }

  /**
   * Whether a webhook update with this id starts a new numbering: it is at or below the highest
   * stored id and not stored unfinished, and either nothing was stored for a week (Telegram only
   * renumbers after that) or it is more than {@link WEBHOOK_RESTART_GAP} below the highest (no
   * redelivery lags that far, so a process that just started needs no week of its own).
   */
  startsNewNumbering(id: number): boolean {
    const highest = this.#highest;
    if (highest === undefined || id > highest || this.#unfinished.has(id)) return false;
    const isQuiet = this.#clock.now() - this.#lastStoredAt >= ID_RESTART_QUIET_MS;
    return isQuiet || id < highest - WEBHOOK_RESTART_GAP;
  }

  /** Whether the old numbering still has updates stored unfinished (or being stored). */
  get isBusy(): boolean {
    return this.#unfinished.size > 0 || this.#reserved > 0;
  }

  /**
   * Waits until no update of the old numbering is unfinished or being stored, then has the journal
   * forget every stored id; concurrent calls share one restart.
   */
  restartIds(signal?: AbortSignal): Promise<void> {
    this.#restarting ??= this.#restart(signal).finally(() => {
      this.#restarting = undefined;
    });
    return this.#restarting;
  }

  /**
   * The dispatcher's finished hook: `id`'s processing (for principal `keyId`) ended for good.
   * What ends in one turn is marked finished in one journal call.
   */
  ended(id: number, keyId: PrincipalId): void {
    this.#feed.ended(keyId);
    this.#ending.push(id);
    if (this.#ending.length === 1) queueMicrotask(this.#finishTask);
  }

  /** Stops handing stored updates to the dispatcher; the rest stays in the journal. */
  stopFeed(): void {
    this.#feed.stop();
  }

  /** Reads the journal once: its highest id for the offset, its unfinished updates to replay. */
  open(): Promise<void> {
    this.#opening ??= this.#replay().catch((error: unknown) => {
      this.#opening = undefined; // try again at the next run() or accept()
      this.#journalFailed(error);
      throw error;
    });
    return this.#opening;
  }

  /**
   * At close: waits for finishes under way, tries the ones the journal failed once more, and
   * stops retrying. What is still unmarked stays unfinished in the journal.
   */
  async settle(): Promise<void> {
    this.#finishTask();
    await Promise.allSettled([...this.#finishing]);
    this.#isSettled = true;
    this.#retryTimer?.cancel();
    this.#retryTimer = undefined;
    if (this.#unmarked.size > 0) {
      this.#retryFinishes();
      await Promise.allSettled([...this.#finishing]);
    }
  }

  /**
   * How far `sentOffset` runs ahead of the oldest unfinished update (in `update_id`s); 0 when
   * nothing unfinished is below it.
   */
  offsetLag(sentOffset: number | undefined): number {
    if (sentOffset === undefined || this.#unfinished.size === 0) return 0;
    // The scan runs again only once the lowest it found has finished.
    let lowest = this.#lowest;
    if (lowest === undefined || !this.#unfinished.has(lowest)) {
      lowest = Number.POSITIVE_INFINITY;
      for (const id of this.#unfinished) if (id < lowest) lowest = id;
      this.#lowest = lowest;
    }
    return Math.max(0, sentOffset - lowest);
  }

  async #restart(signal: AbortSignal | undefined): Promise<void> {
    await this.#waitUntil(() => !this.isBusy, signal);
    if (signal?.aborted) throw abortReason(signal);
    try {
      await this.#journal.restartIds();
    } catch (error) {
      this.#journalFailed(error);
      throw error;
    }
    this.#journalWorked();
    this.#highest = undefined;
  }

  /**
   * Hands the journal's unfinished updates to the feed in arrival order, a page at a time, so a
   * large journal is never read into memory at once (the feed keeps only the ids of what memory
   * does not take). Each page counts as unfinished once it is handed over, so a replay that
   * fails halfway goes on from there at the next attempt.
   */
  async #replay(): Promise<void> {
    this.#isReplaying = true;
    try {
      const [ids, highest] = await Promise.all([
        this.#journal.unfinishedIds(),
        this.#journal.highestUpdateId(),
      ]);
      if (highest !== undefined && (this.#highest === undefined || highest > this.#highest)) {
        this.#highest = highest;
      }
      const fresh = ids.filter((id) => !this.#unfinished.has(id));
      if (fresh.length > 0) {
        safeLog(this.#logger, "info", { count: fresh.length }, LOG.replayed);
        publishIntakeEvent("intake-replayed", () => ({
          type: "intake-replayed",
          count: fresh.length,
        }));
      }
      for (let start = 0; start < fresh.length; start += REPLAY_PAGE) {
        const page = this.#keepValid(
          await this.#journal.read(fresh.slice(start, start + REPLAY_PAGE)),
        ).filter((update) => !this.#unfinished.has(update.update_id));
        for (const update of page) this.#unfinished.add(update.update_id);
        this.#replayed += page.length;
        this.#feed.push(page);
      }
    } finally {
      this.#isReplaying = false;
    }
  }

  /** What the feed reads backlogs with, and tells of failures and of updates gone missing. */
  #feedJournal(): FeedJournal {
    return {
      read: (updateIds) => this.#journal.read(updateIds),
      readFailed: (error) => this.#journalFailed(error),
      missing: (updateIds) => {
        for (const id of updateIds) this.#unfinished.delete(id);
        safeLog(this.#logger, "error", { count: updateIds.length }, LOG.missing);
        this.#wake();
      },
      later: (retry, delayMs) => {
        this.#clock.setTimer(retry, delayMs);
      },
    };
  }

  #markFinished(ids: readonly number[]): void {
    let call: Promise<void>;
    try {
      call = this.#journal.finish(ids);
    } catch (error) {
      call = Promise.reject(error);
    }
    const finishing = call
      .then(
        () => {
          for (let index = 0; index < ids.length; index++) {
            if (this.#unfinished.delete(ids[index] as number)) this.#finished++;
          }
          this.#journalWorked();
          this.#wake();
        },
        (error: unknown) => {
          this.#journalFailed(error);
          for (const id of ids) this.#unmarked.add(id);
          this.#scheduleRetry();
        },
      )
      .finally(() => {
        this.#finishing.delete(finishing);
      });
    this.#finishing.add(finishing);
  }

  #retryFinishes(): void {
    const ids = [...this.#unmarked];
    this.#unmarked.clear();
    this.#markFinished(ids);
  }

  #scheduleRetry(): void {
    if (this.#retryTimer !== undefined || this.#isSettled) return;
    const delayMs = this.#retryDelayMs;
    this.#retryDelayMs = Math.min(BACKOFF_MAX_MS, delayMs * 2);
    this.#retryTimer = this.#clock.setTimer(() => {
      this.#retryTimer = undefined;
      this.#retryFinishes();
    }, delayMs);
  }

  /** Counts a failed journal call; the first of an outage is logged and published. */
  #journalFailed(error: unknown): void {
    this.#journalFailures++;
    this.#outageFailures++;
    if (this.#outageStartedAt !== undefined) return;
    this.#outageStartedAt = this.#clock.now();
    const code = safeCodeOf(error) ?? null;
    safeLog(this.#logger, "warn", { code }, LOG.failing);
    publishIntakeEvent("intake-journal-failed", () => ({ type: "intake-journal-failed", code }));
  }

  /** A journal call succeeded: an outage ends, and finishes it failed are tried again now. */
  #journalWorked(): void {
    this.#retryDelayMs = BACKOFF_START_MS;
    if (this.#outageStartedAt !== undefined) {
      const outageMs = this.#clock.now() - this.#outageStartedAt;
      const failures = this.#outageFailures;
      this.#outageStartedAt = undefined;
      this.#outageFailures = 0;
      safeLog(this.#logger, "info", { outageMs, failures }, LOG.recovered);
      publishIntakeEvent("intake-journal-recovered", () => ({
        type: "intake-journal-recovered",
        outageMs,
        failures,
      }));
    }
    if (this.#unmarked.size > 0 && !this.#isSettled) {
      this.#retryTimer?.cancel();
      this.#retryTimer = undefined;
      this.#retryFinishes();
    }
  }

  #keepValid(updates: readonly Update[]): readonly Update[] {
    const { valid, invalid } = withValidIds(updates);
    if (invalid > 0) {
      this.#invalid += invalid;
      safeLog(this.#logger, "warn", { count: invalid }, LOG.invalid);
    }
    return valid;
  }

  #waitUntil(condition: () => boolean, signal: AbortSignal | undefined): Promise<void> {
    if (condition() || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        if (!condition() && !signal?.aborted) return;
        this.#waiters.delete(wake);
        unsubscribe();
        resolve();
      };
      this.#waiters.add(wake);
      const unsubscribe = onAbort(signal, wake);
    });
  }

  #wake(): void {
    if (this.#waiters.size > 0) for (const wake of [...this.#waiters]) wake();
  }
}

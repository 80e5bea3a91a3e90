// The intake's store side: the journal behind the polling loop and accept(), and what the intake
// keeps beside it — the unfinished ids that count against maxUnfinished, one append chain so
// updates reach the dispatcher in the journal's order, finishes retried through a journal outage,
// and the restart of update ids.

import type { Update } from "@grammyjs/types";
import { abortReason, type Clock, type Logger, onAbort, safeLog, type Timer } from "@telepace/core";
import { validUpdateId } from "../journal/update-id.js";
import type { UpdateJournal } from "../journal/update-journal.js";
import { publishIntakeEvent } from "./diagnostics.js";
import type { DispatchFeed } from "./dispatch-feed.js";
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

// Fixed log text: no update content, no error message (a journal's may name a path).
const LOG = Object.freeze({
  invalid: "Skipped an update without an integer update_id",
  replayed: "Dispatching unfinished updates from the journal",
  failing:
    "The journal failed; the intake keeps trying it with backoff (nothing is confirmed meanwhile)",
  recovered: "The journal works again",
});

function noop(): void {}

/** What {@link IntakeStore} needs from the intake. */
export interface IntakeStoreParts {
  readonly journal: UpdateJournal;
  readonly feed: DispatchFeed;
  readonly maxUnfinished: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * The journal as the intake uses it. Updates are dispatched in the order the journal stored them,
 * and each counts against `maxUnfinished` from its append until the journal has marked it
 * finished: a finish the journal fails is retried (0.5 s doubling to 30 s, and at once when the
 * journal next works), so an outage holds room instead of leaving updates to run again.
 */
export class IntakeStore implements PollingStore {
  readonly #journal: UpdateJournal;
  readonly #feed: DispatchFeed;
  readonly #maxUnfinished: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  // Stored updates the journal has not marked finished, by id: what counts against maxUnfinished.
  readonly #unfinished = new Set<number>();
  // Of those, the ones whose processing ended but whose finish the journal failed.
  readonly #unmarked = new Set<number>();
  readonly #finishing = new Set<Promise<void>>();
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
    this.#feed = parts.feed;
    this.#maxUnfinished = parts.maxUnfinished;
    this.#clock = parts.clock;
    this.#logger = parts.logger;
    this.#lastStoredAt = this.#clock.now();
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

  room(): number {
    return this.#maxUnfinished - this.#unfinished.size - this.#reserved;
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
          for (const update of updates) {
            if (this.#highest === undefined || update.update_id > this.#highest) {
              this.#highest = update.update_id;
            }
          }
          const appended = this.#keepValid(result.appended);
          for (const update of appended) this.#unfinished.add(update.update_id);
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

  /** The dispatcher's finished hook: `id`'s processing ended for good. */
  ended(id: number): void {
    if (this.#unfinished.has(id)) this.#markFinished(id);
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
    let lowest = Number.POSITIVE_INFINITY;
    for (const id of this.#unfinished) if (id < lowest) lowest = id;
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

  async #replay(): Promise<void> {
    this.#isReplaying = true;
    try {
      const [updates, highest] = await Promise.all([
        this.#journal.unfinished(),
        this.#journal.highestUpdateId(),
      ]);
      if (highest !== undefined && (this.#highest === undefined || highest > this.#highest)) {
        this.#highest = highest;
      }
      const replay = this.#keepValid(updates).filter((update) => {
        if (this.#unfinished.has(update.update_id)) return false;
        this.#unfinished.add(update.update_id);
        return true;
      });
      this.#replayed += replay.length;
      if (replay.length > 0) {
        safeLog(this.#logger, "info", { count: replay.length }, LOG.replayed);
        publishIntakeEvent("intake-replayed", () => ({
          type: "intake-replayed",
          count: replay.length,
        }));
      }
      this.#feed.push(replay);
    } finally {
      this.#isReplaying = false;
    }
  }

  #markFinished(id: number): void {
    const finishing = Promise.resolve()
      .then(() => this.#journal.finish(id))
      .then(
        () => {
          this.#unfinished.delete(id);
          this.#finished++;
          this.#journalWorked();
          this.#feed.poke();
          this.#wake();
        },
        (error: unknown) => {
          this.#journalFailed(error);
          this.#unmarked.add(id);
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
    for (const id of ids) this.#markFinished(id);
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

  #keepValid(updates: readonly Update[]): Update[] {
    const valid = updates.filter((update) => validUpdateId(update) !== undefined);
    if (valid.length < updates.length) {
      this.#invalid += updates.length - valid.length;
      safeLog(this.#logger, "warn", { count: updates.length - valid.length }, LOG.invalid);
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
    for (const wake of [...this.#waiters]) wake();
  }
}

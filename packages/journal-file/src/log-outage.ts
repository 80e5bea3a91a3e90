// An outage of the log, from a failed write or sync to the resumption that ends it. At once the
// journal's state goes back to what the last completed sync covered (so nothing unacknowledged is
// claimed); then a change asked for after a back-off on the clock writes that state to a new log,
// and the journal goes on. No timer runs meanwhile: an idle journal costs nothing while it waits.

import type { Clock } from "@telepace/core";
import type { JournalModel } from "./journal-model.js";
import { durableModel } from "./log-recovery.js";
import type { LogWriter } from "./log-writer.js";

/** The first wait between two attempts to resume, in ms; it doubles up to {@link MAX_RETRY_MS}. */
export const FIRST_RETRY_MS = 250;
/** The longest wait between two attempts to resume, in ms. */
export const MAX_RETRY_MS = 5_000;

/** What an outage needs from its journal. */
export interface OutageHost {
  readonly clock: Clock;
  readonly writer: LogWriter;
  readonly logPath: string;
  readonly dedupeHorizon: number;
  model(): JournalModel;
  replaceModel(model: JournalModel): void;
  /** Told when an outage ends: how long it lasted and how many failures it saw. */
  onResumed(outageMs: number, failures: number): void;
}

/** Counters of a {@link LogOutage}: monotonic. */
export interface OutageCounters {
  /** Failed writes, syncs, compactions and attempts to resume. */
  failures: number;
  /** Outages that ended with the journal writing again. */
  recoveries: number;
}

/** Tracks outages of one journal and resumes it. */
export class LogOutage {
  readonly #host: OutageHost;
  #startedAt: number | undefined;
  #failures = 0;
  #retryDelayMs = FIRST_RETRY_MS;
  #nextAttemptAt = 0;
  #isRolledBack = false;
  #rollback: Promise<void> | undefined;
  #attempt: Promise<void> | undefined;
  readonly counters: OutageCounters = { failures: 0, recoveries: 0 };

  constructor(host: OutageHost) {
    this.#host = host;
  }

  /**
   * Counts a failure the writer reported; the first one of an outage starts it and rolls the
   * state back. Returns whether it started an outage.
   */
  failed(): boolean {
    this.counters.failures += 1;
    this.#failures += 1;
    if (this.#startedAt !== undefined) return false;
    const now = this.#host.clock.now();
    this.#startedAt = now;
    this.#nextAttemptAt = now;
    this.#retryDelayMs = FIRST_RETRY_MS;
    this.#isRolledBack = false;
    this.#rollback = this.#rollBack()
      .catch(() => {}) // reported as a failure; the next attempt reads again
      .finally(() => {
        this.#rollback = undefined;
      });
    return true;
  }

  /** Resolves once a roll-back in progress is done, so that reads show what is on disk. */
  settled(): Promise<void> {
    return this.#rollback ?? Promise.resolve();
  }

  /**
   * While the writer is failed: one attempt to resume, shared by the calls that come while it
   * runs. Before the back-off has passed (unless `isForced`, for `close`) it rejects at once.
   * Rejects with `ERR_JOURNAL_FAILED` (its `cause` the latest I/O error) when not resumed.
   */
  resume(isForced = false): Promise<void> {
    this.#attempt ??= this.#tryResume(isForced).finally(() => {
      this.#attempt = undefined;
    });
    return this.#attempt;
  }

  async #rollBack(): Promise<void> {
    const host = this.#host;
    const bytes = await host.writer.durableBytes();
    host.replaceModel(durableModel(bytes, host.logPath, host.model(), host.dedupeHorizon));
    this.#isRolledBack = true;
  }

  async #tryResume(isForced: boolean): Promise<void> {
    await this.settled();
    const { writer, clock } = this.#host;
    if (!writer.isFailed) return;
    if (!isForced && clock.now() < this.#nextAttemptAt) throw writer.failure;
    try {
      if (!this.#isRolledBack) await this.#rollBack();
      await writer.resume();
    } catch {
      this.#nextAttemptAt = clock.now() + this.#retryDelayMs;
      this.#retryDelayMs = Math.min(MAX_RETRY_MS, this.#retryDelayMs * 2);
      throw writer.failure;
    }
    const outageMs = clock.now() - (this.#startedAt ?? clock.now());
    const failures = this.#failures;
    this.#startedAt = undefined;
    this.#failures = 0;
    this.counters.recoveries += 1;
    this.#host.onResumed(outageMs, failures);
  }
}

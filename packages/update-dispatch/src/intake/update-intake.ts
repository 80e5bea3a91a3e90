// UpdateIntake: "store first, confirm after". Updates from getUpdates (or a webhook) go into an
// UpdateJournal, the next poll confirms them at once, and the dispatcher processes them at its own
// pace; an update is marked finished in the journal when its processing ends.

import type { Update } from "@grammyjs/types";
import {
  abortReason,
  type Clock,
  checkFunction,
  checkOptions,
  checkSignal,
  type Logger,
  onAbort,
  safeLog,
} from "@telepace/core";
import { type UpdateProcessor, updateDispatcherDefaults } from "../dispatcher/options.js";
import type { CloseResult } from "../dispatcher/results.js";
import { UpdateDispatcher } from "../dispatcher/update-dispatcher.js";
import { PollingStoppedError, UpdateDispatchError } from "../errors.js";
import { MemoryUpdateJournal } from "../journal/memory-journal.js";
import { validUpdateId } from "../journal/update-id.js";
import type { UpdateJournal } from "../journal/update-journal.js";
import { Deadline } from "./deadline.js";
import { publishIntakeEvent } from "./diagnostics.js";
import { DispatchFeed } from "./dispatch-feed.js";
import {
  type AcceptOptions,
  BACKOFF_MAX_MS,
  BACKOFF_START_MS,
  checkIntakeTimeout,
  DEFAULT_RETRY_AFTER_MS,
  type GetUpdates,
  type GetUpdatesParams,
  type IntakeCloseOptions,
  MIN_RETRY_AFTER_MS,
  type ResolvedIntakeOptions,
  type RunOptions,
  resolveIntakeOptions,
  type UpdateIntakeOptions,
} from "./options.js";
import { classifyPollingFailure } from "./polling-failure.js";
import { reportingEnds } from "./processing-end.js";
import type {
  AcceptResult,
  IntakeCloseResult,
  IntakeState,
  UpdateIntakeSnapshot,
} from "./results.js";

const STORED: AcceptResult = Object.freeze({ status: "stored" });
const DUPLICATE: AcceptResult = Object.freeze({ status: "duplicate" });
const BUSY: AcceptResult = Object.freeze({ status: "busy" });
const CLOSED: AcceptResult = Object.freeze({ status: "closed" });

// Fixed log text: no update content, no error message (a transport's may carry the token).
const LOG = Object.freeze({
  pollFailed: "getUpdates failed; polling again after a delay",
  appendFailed: "Storing updates in the journal failed; polling again after a delay",
  finishFailed: "Marking an update finished in the journal failed; it is replayed at next start",
  invalid: "Skipped an update without an integer update_id",
  stopped: "Polling stopped: retrying cannot fix this",
  replayed: "Dispatching unfinished updates from the journal",
  paused: "Polling paused: maxUnfinished stored updates are unfinished",
});

function noop(): void {}

/**
 * Takes Telegram updates in — by long polling or from a webhook — and processes them through an
 * {@link UpdateDispatcher} without ever letting processing hold back intake: each batch is
 * stored in an {@link UpdateJournal} first, the next `getUpdates` confirms it (offset = highest
 * stored `update_id` + 1), and each update is marked finished in the journal when its processing
 * ends (succeeded, failed or timed out). At start the journal's unfinished updates are dispatched
 * first, in arrival order. A bound on stored-but-unfinished updates (`maxUnfinished`) stops
 * fetching instead of dropping.
 *
 * @example
 * const intake = new UpdateIntake(async (update, signal) => handle(update, { signal }), {
 *   getUpdates: (params, options) => client.getUpdates(params, options),
 *   dispatcher: { timeoutMs: 30_000 },
 * });
 * await intake.run({ signal: shutdown }); // until aborted; throws PollingStoppedError on 409
 * await intake.close({ timeoutMs: 10_000 });
 */
export class UpdateIntake implements AsyncDisposable {
  readonly #options: ResolvedIntakeOptions;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #journal: UpdateJournal;
  readonly #ownsJournal: boolean;
  readonly #dispatcher: UpdateDispatcher;
  readonly #feed: DispatchFeed;
  // Stored updates not finished yet, by id; what counts against maxUnfinished.
  readonly #unfinished = new Set<number>();
  readonly #finishing = new Set<Promise<void>>();
  readonly #roomWaiters = new Set<() => void>();
  // Aborted by close(): ends polling, backoff sleeps and pauses.
  readonly #stopper = new AbortController();
  #reserved = 0;
  #highest: number | undefined;
  #sentOffset: number | undefined;
  #appendTail: Promise<unknown> = Promise.resolve();
  #opening: Promise<void> | undefined;
  #loop: Promise<void> | undefined;
  #closing: Promise<IntakeCloseResult> | undefined;
  #state: IntakeState = "idle";
  #pausedAt = 0;
  #polls = 0;
  #fetched = 0;
  #appended = 0;
  #duplicates = 0;
  #replayed = 0;
  #finished = 0;
  #busy = 0;
  #invalid = 0;
  #rateLimited = 0;
  #backoffs = 0;
  #pauses = 0;

  /**
   * @param processor - called once per stored update with the update and an `AbortSignal`, as
   *   by {@link UpdateDispatcher}.
   * @param options - see {@link UpdateIntakeOptions}.
   * @throws {TypeError | RangeError} when the processor is not a function or an option is
   *   unknown or invalid, naming it.
   */
  constructor(processor: UpdateProcessor, options?: UpdateIntakeOptions) {
    checkFunction("processor", processor);
    this.#options = resolveIntakeOptions(options);
    this.#clock = this.#options.clock;
    this.#logger = this.#options.logger;
    this.#ownsJournal = this.#options.journal === undefined;
    this.#journal = this.#options.journal ?? new MemoryUpdateJournal();
    const dispatcherOptions = this.#options.dispatcher;
    const tracked = reportingEnds(processor, dispatcherOptions.timeoutMs !== undefined, (id) =>
      this.#ended(id),
    );
    this.#dispatcher = new UpdateDispatcher(tracked, {
      ...dispatcherOptions,
      clock: this.#clock,
      logger: this.#logger,
    });
    const maxWaiting =
      dispatcherOptions.maxWaitingEnqueues ?? updateDispatcherDefaults.maxWaitingEnqueues;
    this.#feed = new DispatchFeed(this.#dispatcher, maxWaiting, (update) =>
      this.#ended(update.update_id),
    );
  }

  /**
   * The journal: keep small application records next to the updates with its `putState`,
   * `deleteState` and `state` (for example the jobs you are running, so a restart can finish or
   * report them).
   */
  get journal(): UpdateJournal {
    return this.#journal;
  }

  /**
   * Long-polls `getUpdates` until `signal` aborts or `close()` is called, then resolves. The
   * journal's unfinished updates are dispatched first. A 429 is slept out (`retry_after`, at
   * least 1 s, at most `maxRetryAfterMs`); other failures back off from 0.5 s doubling to 30 s.
   *
   * @throws {PollingStoppedError} (rejects) on 409 (`ERR_POLLING_CONFLICT`: another poller or a
   *   webhook) and 401/404 (`ERR_POLLING_UNAUTHORIZED`); processing goes on until `close()`.
   * @throws {UpdateDispatchError} (rejects) `ERR_INTAKE_RUNNING` when already polling,
   *   `ERR_INTAKE_CLOSED` after `close()`.
   * @throws {TypeError} when the intake has no `getUpdates` or an option is malformed.
   */
  run(options?: RunOptions): Promise<void> {
    const given = checkOptions("options", options, ["signal"]);
    const signal = checkSignal("signal", given.signal);
    const { getUpdates } = this.#options;
    if (getUpdates === undefined) {
      throw new TypeError("run() needs the `getUpdates` option; a webhook intake uses accept()");
    }
    if (this.#closing !== undefined) {
      return Promise.reject(new UpdateDispatchError("ERR_INTAKE_CLOSED", "The intake is closed"));
    }
    if (this.#loop !== undefined) {
      return Promise.reject(
        new UpdateDispatchError("ERR_INTAKE_RUNNING", "The intake is already polling"),
      );
    }
    const stop =
      signal === undefined ? this.#stopper.signal : AbortSignal.any([this.#stopper.signal, signal]);
    const run = this.#poll(getUpdates, stop).then(
      () => {
        this.#loop = undefined;
        if (this.#closing === undefined) this.#state = "idle";
        const reason = this.#stopper.signal.aborted ? "closed" : "aborted";
        publishIntakeEvent("intake-stopped", () => ({ type: "intake-stopped", reason }));
      },
      (error: unknown) => {
        this.#loop = undefined;
        if (error instanceof PollingStoppedError) {
          if (this.#closing === undefined) this.#state = "stopped";
          safeLog(this.#logger, "error", { errorCode: error.errorCode }, LOG.stopped);
          const reason = error.errorCode === 409 ? "conflict" : "unauthorized";
          publishIntakeEvent("intake-stopped", () => ({ type: "intake-stopped", reason }));
        } else if (this.#closing === undefined) {
          this.#state = "idle";
        }
        throw error;
      },
    );
    this.#loop = run.then(noop, noop);
    return run;
  }

  /**
   * The webhook entry point: stores one update and resolves once the journal holds it, so the
   * handler answers Telegram 200 only then. Updates are dispatched in the order they were
   * stored; a repeated `update_id` is `duplicate`; at `maxUnfinished` it is `busy` and nothing is
   * stored (answer 503 so Telegram retries). The journal's unfinished updates are dispatched
   * before the first accepted one.
   *
   * @returns rejects with a TypeError when the update has no `update_id` that is an integer >= 0, with
   *   `signal.reason` when the signal aborted first, and with the journal's error when storing
   *   failed (answer 500: Telegram retries).
   */
  async accept(update: Update, options?: AcceptOptions): Promise<AcceptResult> {
    const given = checkOptions("options", options, ["signal"]);
    const signal = checkSignal("signal", given.signal);
    const id = validUpdateId(update);
    if (id === undefined)
      throw new TypeError("Expected an update with an `update_id` that is an integer >= 0");
    if (this.#closing !== undefined) return CLOSED;
    if (signal?.aborted) throw abortReason(signal);
    await this.#open();
    if (this.#closing !== undefined) return CLOSED;
    if (signal?.aborted) throw abortReason(signal);
    if (this.#unfinished.has(id)) {
      this.#duplicates++;
      return DUPLICATE;
    }
    if (this.#room() <= 0) {
      this.#busy++;
      return BUSY;
    }
    const { appended } = await this.#store([update], "webhook");
    return appended.length > 0 ? STORED : DUPLICATE;
  }

  /** A fresh, frozen snapshot of gauges and counters. */
  snapshot(): UpdateIntakeSnapshot {
    return Object.freeze({
      state: this.#state,
      polls: this.#polls,
      fetched: this.#fetched,
      appended: this.#appended,
      duplicates: this.#duplicates,
      replayed: this.#replayed,
      finished: this.#finished,
      unfinished: this.#unfinished.size,
      busy: this.#busy,
      invalid: this.#invalid,
      rateLimited: this.#rateLimited,
      backoffs: this.#backoffs,
      pauses: this.#pauses,
      confirmedOffset: this.#sentOffset,
      offsetLag: this.#offsetLag(),
      journal: this.#journal.snapshot(),
      dispatcher: this.#dispatcher.snapshot(),
    });
  }

  /**
   * Stops fetching and accepting, lets the dispatcher finish stored updates for up to
   * `timeoutMs`, then aborts what still runs. Unfinished updates stay in the journal (not marked
   * finished), so the next intake on the same journal replays them. Confirms the stored updates
   * to Telegram if the last poll had not. Closes the journal only if the intake created it.
   * Calling it again returns the same promise.
   *
   * @throws {TypeError | RangeError} synchronously for a malformed option.
   */
  close(options?: IntakeCloseOptions): Promise<IntakeCloseResult> {
    if (this.#closing !== undefined) return this.#closing;
    const given = checkOptions("options", options, ["timeoutMs", "signal"]);
    const timeoutMs = checkIntakeTimeout(
      "timeoutMs",
      given.timeoutMs,
      this.#options.closeTimeoutMs,
    );
    const signal = checkSignal("signal", given.signal);
    this.#closing = this.#shutDown(timeoutMs, signal);
    return this.#closing;
  }

  /** `close()` with the `closeTimeoutMs` grace period, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // The one place that reads the dispatcher's counters.

  /** Processing of `id` ended: mark it finished in the journal, then free its room. */
  #ended(id: number): void {
    if (!this.#unfinished.has(id)) return;
    const finishing = Promise.resolve()
      .then(() => this.#journal.finish(id))
      .then(
        () => {
          this.#finished++;
        },
        () => safeLog(this.#logger, "warn", { updateId: id }, LOG.finishFailed),
      )
      .finally(() => {
        this.#finishing.delete(finishing);
        this.#unfinished.delete(id);
        this.#feed.poke();
        if (this.#room() > 0) for (const wake of [...this.#roomWaiters]) wake();
      });
    this.#finishing.add(finishing);
  }

  #room(): number {
    return this.#options.maxUnfinished - this.#unfinished.size - this.#reserved;
  }

  /** Reads the journal once: its highest id for the offset, its unfinished updates to replay. */
  #open(): Promise<void> {
    this.#opening ??= this.#replay().catch((error: unknown) => {
      this.#opening = undefined; // try again at the next run() or accept()
      throw error;
    });
    return this.#opening;
  }

  async #replay(): Promise<void> {
    const previous = this.#state;
    this.#state = "replaying";
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
      if (this.#closing === undefined) this.#feed.push(replay);
    } finally {
      if (this.#state === "replaying") this.#state = previous;
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

  /** Appends through one chain, so updates are dispatched in the journal's order. */
  #store(updates: readonly Update[], source: "poll" | "webhook"): Promise<{ appended: number[] }> {
    this.#reserved += updates.length;
    const appending = this.#appendTail.then(() => this.#journal.append(updates));
    this.#appendTail = appending.catch(noop);
    return appending
      .finally(() => {
        this.#reserved -= updates.length;
      })
      .then((result) => {
        for (const update of updates) {
          if (this.#highest === undefined || update.update_id > this.#highest) {
            this.#highest = update.update_id;
          }
        }
        const appended = this.#keepValid(result.appended);
        for (const update of appended) this.#unfinished.add(update.update_id);
        this.#appended += appended.length;
        this.#duplicates += result.duplicates;
        publishIntakeEvent("intake-stored", () => ({
          type: "intake-stored",
          source,
          appended: appended.length,
          duplicates: result.duplicates,
        }));
        this.#feed.push(appended);
        return { appended: appended.map((update) => update.update_id) };
      });
  }

  #nextOffset(): number | undefined {
    return this.#highest === undefined ? undefined : this.#highest + 1;
  }

  #params(limit: number): GetUpdatesParams {
    const offset = this.#nextOffset();
    const { pollTimeoutSeconds, allowedUpdates } = this.#options;
    return {
      ...(offset === undefined ? {} : { offset }),
      limit,
      timeout: pollTimeoutSeconds,
      ...(allowedUpdates === undefined ? {} : { allowed_updates: allowedUpdates }),
    };
  }

  async #poll(getUpdates: GetUpdates, signal: AbortSignal): Promise<void> {
    await this.#open();
    let backoffMs = BACKOFF_START_MS;
    while (!signal.aborted) {
      const room = this.#room();
      if (room <= 0) {
        await this.#pause(signal);
        continue;
      }
      const params = this.#params(Math.min(this.#options.pollLimit, room));
      this.#state = "polling";
      this.#polls++;
      if (params.offset !== undefined) this.#sentOffset = params.offset;
      const startedAt = this.#clock.now();
      let updates: readonly Update[];
      try {
        updates = await getUpdates(params, { signal });
        if (!Array.isArray(updates)) throw new TypeError("getUpdates did not return an array");
      } catch (error) {
        if (signal.aborted) break;
        const failure = classifyPollingFailure(error);
        if (failure.kind === "stop")
          throw new PollingStoppedError(failure.errorCode, { cause: error });
        if (failure.kind === "rate-limited") {
          this.#rateLimited++;
          const retryAfterMs = failure.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
          const delayMs = Math.min(
            this.#options.maxRetryAfterMs,
            Math.max(MIN_RETRY_AFTER_MS, retryAfterMs),
          );
          await this.#backOff("rate-limited", delayMs, 429, undefined, signal);
        } else {
          await this.#backOff("transient", backoffMs, failure.errorCode, failure.code, signal);
          backoffMs = Math.min(BACKOFF_MAX_MS, backoffMs * 2);
        }
        continue;
      }
      // A batch that arrives after the stop is not stored: it is not confirmed either, so
      // Telegram sends it again.
      if (signal.aborted) break;
      publishIntakeEvent("intake-polled", () => ({
        type: "intake-polled",
        offset: params.offset ?? null,
        received: updates.length,
        durationMs: this.#clock.now() - startedAt,
      }));
      this.#fetched += updates.length;
      const batch = this.#keepValid(updates);
      try {
        if (batch.length > 0) await this.#store(batch, "poll");
        backoffMs = BACKOFF_START_MS;
      } catch (error) {
        await this.#backOff("journal", backoffMs, undefined, codeOf(error), signal);
        backoffMs = Math.min(BACKOFF_MAX_MS, backoffMs * 2);
      }
    }
  }

  async #backOff(
    reason: "rate-limited" | "transient" | "journal",
    delayMs: number,
    errorCode: number | undefined,
    code: string | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    this.#state = "backing-off";
    this.#backoffs++;
    const message = reason === "journal" ? LOG.appendFailed : LOG.pollFailed;
    safeLog(this.#logger, "warn", { reason, errorCode, code, delayMs }, message);
    publishIntakeEvent("intake-backoff", () => ({
      type: "intake-backoff",
      reason,
      delayMs,
      errorCode: errorCode ?? null,
    }));
    await this.#clock.sleep(delayMs, { signal }).catch(noop);
  }

  /**
   * At the bound: wait until processing frees room. The last batch stays unconfirmed meanwhile;
   * that is harmless (Telegram would send it again, and the journal knows it), and confirming it
   * here would fetch an update only to drop it.
   */
  async #pause(signal: AbortSignal): Promise<void> {
    this.#state = "paused";
    this.#pauses++;
    this.#pausedAt = this.#clock.now();
    const unfinished = this.#unfinished.size;
    safeLog(this.#logger, "info", { unfinished }, LOG.paused);
    publishIntakeEvent("intake-paused", () => ({ type: "intake-paused", unfinished }));
    if (this.#room() <= 0 && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.#roomWaiters.delete(wake);
          unsubscribe();
          resolve();
        };
        this.#roomWaiters.add(wake);
        const unsubscribe = onAbort(signal, wake);
      });
    }
    if (signal.aborted) return;
    publishIntakeEvent("intake-resumed", () => ({
      type: "intake-resumed",
      unfinished: this.#unfinished.size,
      pausedMs: this.#clock.now() - this.#pausedAt,
    }));
  }

  /**
   * At close, confirms the stored updates if no poll has yet (so a processed update is not sent
   * again to the next process): a `getUpdates` with the new offset and `limit: 1`, whose answer
   * is discarded (it is not confirmed, so Telegram sends it again).
   */
  async #confirm(getUpdates: GetUpdates, signal: AbortSignal): Promise<void> {
    const offset = this.#nextOffset();
    if (offset === undefined || (this.#sentOffset !== undefined && offset <= this.#sentOffset)) {
      return;
    }
    this.#polls++;
    this.#sentOffset = offset;
    try {
      await getUpdates({ offset, limit: 1, timeout: 0 }, { signal });
    } catch {
      // The next poll confirms it as well; a failure here changes nothing.
    }
  }

  async #shutDown(timeoutMs: number, signal: AbortSignal | undefined): Promise<IntakeCloseResult> {
    this.#state = "closing";
    const deadline = new Deadline(this.#clock, timeoutMs, signal);
    this.#stopper.abort(new UpdateDispatchError("ERR_INTAKE_CLOSED", "The intake is closing"));
    let closed: CloseResult;
    try {
      // A getUpdates or an append that ignores the stop is not waited for past the deadline.
      await deadline.race(Promise.all([this.#loop, this.#appendTail]));
      this.#feed.stop();
      const { getUpdates } = this.#options;
      if (getUpdates !== undefined && this.#polls > 0 && !deadline.signal.aborted) {
        await this.#confirm(getUpdates, deadline.signal);
      }
      closed = await this.#dispatcher.close({
        timeoutMs: deadline.remainingMs,
        signal: deadline.signal,
      });
    } finally {
      deadline.dispose();
    }
    await Promise.allSettled([...this.#finishing]);
    if (this.#ownsJournal) await this.#journal.close().catch(noop);
    this.#state = "closed";
    return Object.freeze({ status: closed.status, unfinished: this.#unfinished.size });
  }

  #offsetLag(): number {
    if (this.#sentOffset === undefined || this.#unfinished.size === 0) return 0;
    let lowest = Number.POSITIVE_INFINITY;
    for (const id of this.#unfinished) if (id < lowest) lowest = id;
    return Math.max(0, this.#sentOffset - lowest);
  }
}

function codeOf(error: unknown): string | undefined {
  const failure = classifyPollingFailure(error);
  return failure.kind === "transient" ? failure.code : undefined;
}

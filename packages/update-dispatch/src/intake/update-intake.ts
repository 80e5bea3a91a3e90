// UpdateIntake: "store first, confirm after". Updates from getUpdates (or a webhook) go into an
// UpdateJournal, the next poll confirms them at once, and the dispatcher processes them at its own
// pace; its finished hook marks each one finished in the journal when its processing ends.

import type { Update } from "@grammyjs/types";
import {
  abortReason,
  type Clock,
  checkFunction,
  checkOptions,
  checkSignal,
  type Logger,
  safeLog,
} from "@telepace/core";
import { dispatcherAccess } from "../dispatcher/dispatcher-access.js";
import { type UpdateProcessor, updateDispatcherDefaults } from "../dispatcher/options.js";
import type { CloseResult } from "../dispatcher/results.js";
import { UpdateDispatcher } from "../dispatcher/update-dispatcher.js";
import { PollingStoppedError, UpdateDispatchError } from "../errors.js";
import { MemoryUpdateJournal } from "../journal/memory-journal.js";
import { validUpdateId } from "../journal/update-id.js";
import type { UpdateJournal } from "../journal/update-journal.js";
import { Deadline } from "./deadline.js";
import { publishIntakeEvent } from "./diagnostics.js";
import { IntakeStore } from "./intake-store.js";
import {
  type AcceptOptions,
  checkIntakeTimeout,
  type IntakeCloseOptions,
  MEMORY_JOURNAL_MAX_UPDATES,
  type ResolvedIntakeOptions,
  type RunOptions,
  resolveIntakeOptions,
  type UpdateIntakeOptions,
  updateIntakeDefaults,
} from "./options.js";
import { type PollingEvent, PollingLoop } from "./polling-loop.js";
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

// Fixed log text, the polling loop's wording for the same event.
const LOG = Object.freeze({
  restarted: "Update ids restarted lower (a new numbering): forgot the old ids, intake goes on",
});

function noop(): void {}

/**
 * Takes Telegram updates in — by long polling or from a webhook — and processes them through an
 * {@link UpdateDispatcher} without ever letting processing hold back intake: each batch is
 * stored in an {@link UpdateJournal} first, the next `getUpdates` confirms it (offset = highest
 * stored `update_id` + 1), and each update is marked finished in the journal when its processing
 * ends (succeeded, failed or timed out). At start the journal's unfinished updates are dispatched
 * first, in arrival order. At most `maxUnfinished` updates are held in memory, and of one
 * principal at most its dispatcher queue's worth: the rest wait in the journal and are read back
 * in order. A bound on stored-but-unfinished updates (`maxJournalUpdates`) stops
 * fetching instead of dropping. Polling runs on a {@link PollingLoop}.
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
  readonly #store: IntakeStore;
  readonly #polling: PollingLoop | undefined;
  // Aborted by close(): ends polling, backoff sleeps and pauses.
  readonly #stopper = new AbortController();
  #loop: Promise<void> | undefined;
  #closing: Promise<IntakeCloseResult> | undefined;
  #webhookRestart: Promise<void> | undefined;
  #isStopped = false;
  #isClosed = false;
  #busy = 0;
  #webhookRestarts = 0;

  /**
   * @param processor - called once per stored update with the update and an `AbortSignal`, as
   *   by {@link UpdateDispatcher}.
   * @param options - see {@link UpdateIntakeOptions}.
   * @throws {TypeError | RangeError} when the processor is not a function or an option is
   *   unknown or invalid, naming it.
   */
  constructor(processor: UpdateProcessor, options?: UpdateIntakeOptions) {
    checkFunction("processor", processor);
    const resolved = resolveIntakeOptions(options);
    this.#options = resolved;
    this.#clock = resolved.clock;
    this.#logger = resolved.logger;
    this.#ownsJournal = resolved.journal === undefined;
    const journal = resolved.journal ?? new MemoryUpdateJournal();
    this.#journal = journal;
    const given = resolved.dispatcher;
    // The journal decides what is a duplicate: a window of finished ids here would call an update
    // of a new numbering a duplicate of an old one, and nothing would ever process it. Memory is
    // bounded by maxUnfinished, so the dispatcher admits as many principals as that holds: no
    // update in memory waits to become active. Slots default to one per active person (see the
    // `dispatcher` option), so pacing, not slots, bounds a burst.
    this.#dispatcher = new UpdateDispatcher(processor, {
      ...given,
      maxActivePrincipals:
        given.maxActivePrincipals ??
        Math.max(updateDispatcherDefaults.maxActivePrincipals, resolved.maxUnfinished),
      maxConcurrency:
        given.maxConcurrency ?? given.maxActivePrincipals ?? updateIntakeDefaults.maxConcurrency,
      dedupeWindow: 0,
      clock: this.#clock,
      logger: this.#logger,
    });
    const access = dispatcherAccess(this.#dispatcher);
    access.leaveIdsToJournal();
    const maxQueued = given.maxQueuedPerPrincipal ?? updateDispatcherDefaults.maxQueuedPerPrincipal;
    this.#store = new IntakeStore({
      journal,
      access,
      maxUnfinished: resolved.maxUnfinished,
      maxJournalUpdates:
        resolved.maxJournalUpdates ??
        (journal.snapshot().isDurable
          ? updateIntakeDefaults.maxJournalUpdates
          : MEMORY_JOURNAL_MAX_UPDATES),
      principalCapacity: maxQueued + 1,
      clock: this.#clock,
      logger: this.#logger,
    });
    access.onFinished((updateId, _outcome, keyId) => this.#store.ended(updateId, keyId));
    const { getUpdates } = resolved;
    this.#polling =
      getUpdates === undefined
        ? undefined
        : new PollingLoop(this.#store, {
            getUpdates,
            pollLimit: resolved.pollLimit,
            pollTimeoutSeconds: resolved.pollTimeoutSeconds,
            allowedUpdates: resolved.allowedUpdates,
            maxRetryAfterMs: resolved.maxRetryAfterMs,
            journalFailure: resolved.journalFailure,
            clock: this.#clock,
            logger: this.#logger,
            onEvent: (event) => this.#publish(event),
          });
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
   * least 1 s, at most `maxRetryAfterMs`); other failures back off from 0.5 s doubling to 30 s;
   * a batch the journal fails to store is offered to it again the same way.
   *
   * @throws {PollingStoppedError} (rejects) on 409 (`ERR_POLLING_CONFLICT`: another poller or a
   *   webhook) and 401/404 (`ERR_POLLING_UNAUTHORIZED`); processing goes on until `close()`.
   * @throws {UpdateDispatchError} (rejects) `ERR_POLLING_JOURNAL_FAILED` when storing failed and
   *   `journalFailure` is `"reject"`, `ERR_INTAKE_RUNNING` when already polling,
   *   `ERR_INTAKE_CLOSED` after `close()`.
   * @throws {TypeError} when the intake has no `getUpdates` or an option is malformed.
   */
  run(options?: RunOptions): Promise<void> {
    const given = checkOptions("options", options, ["signal"]);
    const signal = checkSignal("signal", given.signal);
    const polling = this.#polling;
    if (polling === undefined) {
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
    this.#isStopped = false;
    const run = this.#poll(polling, stop).then(
      () => {
        this.#loop = undefined;
        const reason = this.#stopper.signal.aborted ? "closed" : "aborted";
        publishIntakeEvent("intake-stopped", () => ({ type: "intake-stopped", reason }));
      },
      (error: unknown) => {
        this.#loop = undefined;
        const reason = stopReasonOf(error);
        if (reason !== undefined) {
          this.#isStopped = true;
          publishIntakeEvent("intake-stopped", () => ({ type: "intake-stopped", reason }));
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
   * stored; a repeated `update_id` is `duplicate`; at `maxJournalUpdates` it is `busy` and nothing is
   * stored (answer 503 so Telegram retries). The journal's unfinished updates are dispatched
   * before the first accepted one. An update that starts a new numbering of update ids (see the
   * README) is `busy` until the old numbering's unfinished updates have finished.
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
    await this.#store.open();
    if (this.#closing !== undefined) return CLOSED;
    if (signal?.aborted) throw abortReason(signal);
    const store = this.#store;
    if (store.isUnfinished(id)) {
      store.countDuplicate();
      return DUPLICATE;
    }
    if (store.startsNewNumbering(id)) {
      if (store.isBusy) {
        this.#busy++;
        return BUSY;
      }
      await this.#restartForWebhook();
    }
    if (store.room() <= 0) {
      this.#busy++;
      return BUSY;
    }
    return (await store.store([update], "webhook")) > 0 ? STORED : DUPLICATE;
  }

  /** A fresh, frozen snapshot of gauges and counters. */
  snapshot(): UpdateIntakeSnapshot {
    const polling = this.#polling?.snapshot();
    const counts = this.#store.counts;
    return Object.freeze({
      state: this.#currentState(),
      polls: polling?.polls ?? 0,
      fetched: polling?.fetched ?? 0,
      appended: counts.appended,
      duplicates: counts.duplicates,
      replayed: counts.replayed,
      finished: counts.finished,
      unfinished: counts.unfinished,
      inMemory: counts.inMemory,
      backlog: counts.backlog,
      readBack: counts.readBack,
      busy: this.#busy,
      invalid: counts.invalid + (polling?.invalid ?? 0),
      rateLimited: polling?.rateLimited ?? 0,
      backoffs: polling?.backoffs ?? 0,
      pauses: polling?.pauses ?? 0,
      idRestarts: (polling?.idRestarts ?? 0) + this.#webhookRestarts,
      journalFailures: counts.journalFailures,
      journalOutageMs: counts.journalOutageMs,
      confirmedOffset: polling?.confirmedOffset,
      offsetLag: this.#store.offsetLag(polling?.confirmedOffset),
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

  async #poll(polling: PollingLoop, signal: AbortSignal): Promise<void> {
    await this.#store.open();
    await polling.run({ signal });
  }

  #currentState(): IntakeState {
    if (this.#closing !== undefined) return this.#isClosed ? "closed" : "closing";
    if (this.#store.isReplaying) return "replaying";
    if (this.#loop !== undefined && this.#polling !== undefined) {
      const { state } = this.#polling;
      return state === "idle" ? "polling" : state;
    }
    return this.#isStopped ? "stopped" : "idle";
  }

  /** A webhook update started a new numbering and nothing is unfinished: forget the old ids. */
  #restartForWebhook(): Promise<void> {
    this.#webhookRestart ??= (async () => {
      const highest = this.#store.highestUpdateId();
      const startedAt = this.#clock.now();
      await this.#store.restartIds();
      this.#webhookRestarts++;
      const offset = highest === undefined ? null : highest + 1;
      safeLog(this.#logger, "warn", { offset }, LOG.restarted);
      publishIntakeEvent("intake-ids-restarted", () => ({
        type: "intake-ids-restarted",
        source: "webhook",
        offset,
        waitedMs: this.#clock.now() - startedAt,
      }));
    })().finally(() => {
      this.#webhookRestart = undefined;
    });
    return this.#webhookRestart;
  }

  /** The polling loop's events on the intake's channels. */
  #publish(event: PollingEvent): void {
    switch (event.type) {
      case "polled":
        publishIntakeEvent("intake-polled", () => ({ ...event, type: "intake-polled" }));
        break;
      case "backoff":
        publishIntakeEvent("intake-backoff", () => ({ ...event, type: "intake-backoff" }));
        break;
      case "paused":
        publishIntakeEvent("intake-paused", () => ({
          type: "intake-paused",
          unfinished: this.#store.counts.unfinished,
        }));
        break;
      case "resumed":
        publishIntakeEvent("intake-resumed", () => ({
          type: "intake-resumed",
          unfinished: this.#store.counts.unfinished,
          pausedMs: event.pausedMs,
        }));
        break;
      case "ids-restarted":
        publishIntakeEvent("intake-ids-restarted", () => ({
          ...event,
          type: "intake-ids-restarted",
        }));
        break;
    }
  }

  async #shutDown(timeoutMs: number, signal: AbortSignal | undefined): Promise<IntakeCloseResult> {
    const deadline = new Deadline(this.#clock, timeoutMs, signal);
    this.#stopper.abort(new UpdateDispatchError("ERR_INTAKE_CLOSED", "The intake is closing"));
    let closed: CloseResult;
    try {
      // A getUpdates or an append that ignores the stop is not waited for past the deadline.
      await deadline.race(Promise.all([this.#loop, this.#store.appending]));
      this.#store.stopFeed();
      const polling = this.#polling;
      if (polling !== undefined && polling.snapshot().polls > 0 && !deadline.signal.aborted) {
        await polling.confirm({ signal: deadline.signal });
      }
      closed = await this.#dispatcher.close({
        timeoutMs: deadline.remainingMs,
        signal: deadline.signal,
      });
    } finally {
      deadline.dispose();
    }
    await this.#store.settle();
    if (this.#ownsJournal) await this.#journal.close().catch(noop);
    this.#isClosed = true;
    return Object.freeze({ status: closed.status, unfinished: this.#store.counts.unfinished });
  }
}

/** Why a rejection of the polling loop ended it, for `intake-stopped`; `undefined`: no stop. */
function stopReasonOf(error: unknown): "conflict" | "unauthorized" | "journal" | undefined {
  if (error instanceof PollingStoppedError) {
    return error.errorCode === 409 ? "conflict" : "unauthorized";
  }
  if (error instanceof UpdateDispatchError && error.code === "ERR_POLLING_JOURNAL_FAILED") {
    return "journal";
  }
  return undefined;
}

// PollingLoop: the one long-polling core behind UpdateIntake and @telepace/redis's SharedPoller.
// Fetch, read a failure (back off, honour retry_after, stop on 409/401/404), hand the batch to a
// store, pause at the store's bound, and notice update ids that restarted lower.

import type { Update } from "@grammyjs/types";
import {
  type Clock,
  checkClock,
  checkFunction,
  checkLogger,
  checkMethods,
  checkObject,
  checkOptions,
  type Logger,
  safeLog,
  systemClock,
} from "@telepace/core";
import { PollingStoppedError, UpdateDispatchError } from "../errors.js";
import { withValidIds } from "../journal/update-id.js";
import { classifyPollingFailure, safeCodeOf } from "./polling-failure.js";
import {
  BACKOFF_MAX_MS,
  BACKOFF_START_MS,
  DEFAULT_RETRY_AFTER_MS,
  type GetUpdates,
  type GetUpdatesParams,
  MIN_RETRY_AFTER_MS,
  POLLING_OPTION_NAMES,
  type PollingOptions,
  type ResolvedPollingOptions,
  resolvePollingOptions,
} from "./polling-options.js";

/**
 * Where a {@link PollingLoop} keeps what it fetches: the intake's journal, a shared queue, your
 * own table. The loop calls one method at a time; a rejection of any of them counts as a failure
 * of the store (the loop waits and tries again, or stops with `journalFailure: "reject"`).
 */
export interface PollingStore {
  /** How many more updates may be stored now. At 0 or less the loop pauses (see `waitForRoom`). */
  room(): number | Promise<number>;
  /**
   * Resolves once room may have come back, or once `signal` aborts; the loop then asks `room()`
   * again. Resolve only after something changed or some time passed: the loop asks again at once.
   */
  waitForRoom(signal: AbortSignal): Promise<void>;
  /** The highest `update_id` stored, or `undefined`: the next poll confirms it with its + 1. */
  highestUpdateId(): number | undefined | Promise<number | undefined>;
  /**
   * Stores a fetched batch, which the next poll confirms. Every id is at or above the offset that
   * fetched it; ids seen before are the store's to skip. Resolve once the batch is stored.
   */
  append(updates: readonly Update[]): Promise<void>;
  /**
   * The update ids restarted lower: resolve once every stored update of the old numbering has
   * finished (a new id could collide with one) and the store forgot every stored id and its
   * highest one, so `highestUpdateId()` is `undefined`. Reject with `signal.reason` when it aborts.
   */
  restartIds(signal: AbortSignal): Promise<void>;
}

/**
 * A step of a {@link PollingLoop}, for diagnostics. Durations and delays are clock milliseconds.
 * - `polled` — a `getUpdates` call returned `received` updates; `offset` is what it sent.
 * - `backoff` — waiting `delayMs` after a 429 (`rate-limited`), another failed call
 *   (`transient`) or a failed store (`journal`).
 * - `paused` / `resumed` — the store was at its bound / has room again after `pausedMs`.
 * - `ids-restarted` — the ids restarted lower and the store forgot the old ones (see
 *   {@link PollingStore.restartIds}); `source` says how it was noticed, `offset` is the old offset.
 */
export type PollingEvent =
  | {
      readonly type: "polled";
      readonly offset: number | null;
      readonly received: number;
      readonly durationMs: number;
    }
  | {
      readonly type: "backoff";
      readonly reason: "rate-limited" | "transient" | "journal";
      readonly delayMs: number;
      readonly errorCode: number | null;
    }
  | { readonly type: "paused" }
  | { readonly type: "resumed"; readonly pausedMs: number }
  | {
      readonly type: "ids-restarted";
      readonly source: "poll" | "probe";
      readonly offset: number;
      readonly waitedMs: number;
    };

/** Options of the {@link PollingLoop} constructor. */
export interface PollingLoopOptions extends PollingOptions {
  /** Calls the Bot API's `getUpdates`; see {@link GetUpdates}. */
  readonly getUpdates: GetUpdates;
  /** Time source for backoff and 429 waits. @defaultValue systemClock */
  readonly clock?: Clock | undefined;
  /** A pino-compatible logger; fixed messages only, never an update or an error. @defaultValue none */
  readonly logger?: Logger | undefined;
  /** Told of each step, for diagnostics; what it throws is ignored. @defaultValue none */
  readonly onEvent?: ((event: PollingEvent) => void) | undefined;
}

/**
 * What a {@link PollingLoop} is doing: `idle` (not running), `polling` (a `getUpdates` call is
 * in flight or its batch is being stored), `paused` (the store is at its bound), `backing-off`
 * (waiting after a failure) or `restarting` (the ids restarted: waiting for the old numbering's
 * unfinished updates, then forgetting the old ids).
 */
export type PollingState = "idle" | "polling" | "paused" | "backing-off" | "restarting";

/** A fresh, frozen view of a {@link PollingLoop}: its state and monotonic counters. */
export interface PollingLoopSnapshot {
  readonly state: PollingState;
  /** `getUpdates` calls made, ever (probes and the confirming call included). */
  readonly polls: number;
  /** Updates `getUpdates` returned to polls, ever (probes' and the confirming call's answers are not stored). */
  readonly fetched: number;
  /** Updates without an `update_id` that is an integer >= 0, skipped, ever. */
  readonly invalid: number;
  /** 429s from `getUpdates`, ever. */
  readonly rateLimited: number;
  /** Waits before polling or storing again (429s, failed calls, failed stores), ever. */
  readonly backoffs: number;
  /** Times polling stopped at the store's bound, ever. */
  readonly pauses: number;
  /** Times the update ids restarted lower and the store forgot the old ones, ever. */
  readonly idRestarts: number;
  /**
   * The offset of the last `getUpdates` that sent one: Telegram forgets the updates below it.
   * `undefined` before the first, and again right after the ids restarted.
   */
  readonly confirmedOffset: number | undefined;
}

/**
 * After an empty answer, a short probe without an offset (which confirms nothing) is sent when
 * neither an update nor a probe came for this long: it tells "nothing pending" from "the offset is
 * past a new, lower numbering" on a server that answers the latter with nothing at all.
 */
export const QUIET_PROBE_MS = 60_000;

const STORE_METHODS: readonly string[] = Object.freeze([
  "room",
  "waitForRoom",
  "highestUpdateId",
  "append",
  "restartIds",
]);

const OPTION_NAMES: readonly string[] = Object.freeze([
  ...POLLING_OPTION_NAMES,
  "clock",
  "logger",
  "onEvent",
]);

// Fixed log text: no update content, no error message (a transport's may carry the token).
const LOG = Object.freeze({
  pollFailed: "getUpdates failed; polling again after a delay",
  storeFailed: "Storing fetched updates failed; offering them again after a delay",
  storeRejected: "Storing fetched updates failed; polling stopped (journalFailure: reject)",
  invalid: "Skipped an update without an integer update_id",
  stopped: "Polling stopped: retrying cannot fix this",
  paused: "Polling paused: the store is at its bound of unfinished updates",
  restarted: "Update ids restarted lower (a new numbering): forgot the old ids, polling goes on",
});

function noop(): void {}

/**
 * Long-polls `getUpdates` into a {@link PollingStore}: each batch is stored before the next poll
 * confirms it (offset = the store's highest `update_id` + 1). A 429 is slept out (`retry_after`,
 * at least 1 s, at most `maxRetryAfterMs`), other failures back off from 0.5 s doubling to 30 s,
 * 409 and 401/404 stop it with a {@link PollingStoppedError}. A batch the store fails to take is
 * kept and offered again with the same backoff (it is not confirmed, so nothing is lost). At the
 * store's bound it pauses. When an answer holds an id below the offset sent, the ids restarted
 * lower: nothing of that batch is stored, the store finishes the old numbering and forgets its ids
 * ({@link PollingStore.restartIds}), and polling goes on without an offset.
 *
 * @example
 * const loop = new PollingLoop(store, { getUpdates: (p, o) => client.getUpdates(p, o) });
 * await loop.run({ signal: shutdown.signal }); // until aborted; rejects PollingStoppedError on 409
 */
export class PollingLoop {
  readonly #store: PollingStore;
  readonly #getUpdates: GetUpdates;
  readonly #options: ResolvedPollingOptions;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #onEvent: ((event: PollingEvent) => void) | undefined;
  #state: PollingState = "idle";
  #isRunning = false;
  #backoffMs = BACKOFF_START_MS;
  #quietSince = 0;
  #sentOffset: number | undefined;
  #polls = 0;
  #fetched = 0;
  #invalid = 0;
  #rateLimited = 0;
  #backoffs = 0;
  #pauses = 0;
  #idRestarts = 0;

  /**
   * @param store - where fetched batches go; see {@link PollingStore}.
   * @param options - see {@link PollingLoopOptions}.
   * @throws {TypeError | RangeError} when the store lacks a method or an option is unknown or
   *   invalid, naming it.
   */
  constructor(store: PollingStore, options: PollingLoopOptions) {
    const checked = checkMethods<PollingStore>("store", store, STORE_METHODS);
    if (checked === undefined) {
      throw new TypeError("Expected `store` to be a PollingStore, got undefined");
    }
    this.#store = checked;
    const given = checkOptions("options", checkObject("options", options), OPTION_NAMES);
    this.#options = resolvePollingOptions(given);
    this.#getUpdates = checkFunction<GetUpdates>("getUpdates", given.getUpdates);
    this.#clock = checkClock(given.clock, systemClock);
    this.#logger = checkLogger(given.logger);
    this.#onEvent =
      given.onEvent === undefined
        ? undefined
        : checkFunction<(event: PollingEvent) => void>("onEvent", given.onEvent);
  }

  /** What the loop is doing now. */
  get state(): PollingState {
    return this.#state;
  }

  /** A fresh, frozen snapshot of its state and counters. */
  snapshot(): PollingLoopSnapshot {
    return Object.freeze({
      state: this.#state,
      polls: this.#polls,
      fetched: this.#fetched,
      invalid: this.#invalid,
      rateLimited: this.#rateLimited,
      backoffs: this.#backoffs,
      pauses: this.#pauses,
      idRestarts: this.#idRestarts,
      confirmedOffset: this.#sentOffset,
    });
  }

  /**
   * Polls until `signal` aborts, then resolves. A batch that arrives after the abort is not
   * stored: it is not confirmed either, so Telegram sends it again.
   *
   * @throws {PollingStoppedError} (rejects) on 409 and 401/404.
   * @throws {UpdateDispatchError} (rejects) `ERR_POLLING_JOURNAL_FAILED` when the store failed
   *   and `journalFailure` is `"reject"`; `ERR_INTAKE_RUNNING` when the loop already runs.
   */
  async run(options: { readonly signal: AbortSignal }): Promise<void> {
    const { signal } = options;
    if (this.#isRunning) {
      throw new UpdateDispatchError("ERR_INTAKE_RUNNING", "The polling loop is already running");
    }
    this.#isRunning = true;
    this.#quietSince = this.#clock.now();
    try {
      await this.#loop(signal);
    } finally {
      this.#isRunning = false;
      this.#state = "idle";
    }
  }

  /**
   * Confirms the stored updates if no poll has yet, so an update processed now is not sent again
   * to the next process: a `getUpdates` with the new offset and `limit: 1`, whose answer is
   * discarded (it is not confirmed, so Telegram sends it again). Call it while the loop is not
   * running, at shutdown; it never rejects.
   */
  async confirm(options: { readonly signal: AbortSignal }): Promise<void> {
    try {
      const highest = await this.#store.highestUpdateId();
      const offset = highest === undefined ? undefined : highest + 1;
      if (offset === undefined || (this.#sentOffset !== undefined && offset <= this.#sentOffset)) {
        return;
      }
      this.#polls++;
      this.#sentOffset = offset;
      await this.#getUpdates({ offset, limit: 1, timeout: 0 }, { signal: options.signal });
    } catch {
      // The next poll confirms it as well; a failure here changes nothing.
    }
  }

  async #loop(signal: AbortSignal): Promise<void> {
    let held: readonly Update[] | undefined;
    while (!signal.aborted) {
      try {
        held ??= await this.#fetch(signal);
        if (held === undefined) continue;
        await this.#store.append(held);
        held = undefined;
        this.#backoffMs = BACKOFF_START_MS;
      } catch (error) {
        if (signal.aborted) break;
        if (error instanceof PollingStoppedError) throw error;
        const code = safeCodeOf(error);
        if (this.#options.journalFailure === "reject") {
          safeLog(this.#logger, "error", { code }, LOG.storeRejected);
          throw new UpdateDispatchError(
            "ERR_POLLING_JOURNAL_FAILED",
            "Storing fetched updates failed (journalFailure: reject); they stay unconfirmed",
            { cause: error },
          );
        }
        await this.#backOff("journal", this.#nextBackoffMs(), undefined, code, signal);
      }
    }
  }

  /**
   * One poll at the store's offset. `undefined` when there is nothing to store: a failure waited
   * out, an empty answer, or ids that restarted (handled here).
   */
  async #fetch(signal: AbortSignal): Promise<readonly Update[] | undefined> {
    const room = await this.#room(signal);
    if (room <= 0) return undefined;
    const highest = await this.#store.highestUpdateId();
    const offset = highest === undefined ? undefined : highest + 1;
    const { pollLimit, pollTimeoutSeconds, allowedUpdates } = this.#options;
    const updates = await this.#poll(
      {
        ...(offset === undefined ? {} : { offset }),
        limit: Math.min(pollLimit, room),
        timeout: pollTimeoutSeconds,
        ...(allowedUpdates === undefined ? {} : { allowed_updates: allowedUpdates }),
      },
      signal,
    );
    if (updates === undefined) return undefined;
    // Telegram answers ids >= offset; a lower one means it fell back to the head of its queue
    // because the offset lies past a new, lower numbering.
    if (offset !== undefined && updates.some((update) => update.update_id < offset)) {
      await this.#restartIds("poll", offset, signal);
      return undefined;
    }
    if (updates.length === 0) {
      this.#backoffMs = BACKOFF_START_MS;
      if (offset !== undefined) await this.#probeIfQuiet(offset, signal);
      return undefined;
    }
    this.#quietSince = this.#clock.now();
    return updates;
  }

  /** The store's room; at its bound, pauses until there is some (0: aborted meanwhile). */
  async #room(signal: AbortSignal): Promise<number> {
    let room = await this.#store.room();
    if (room > 0) return room;
    this.#state = "paused";
    this.#pauses++;
    const pausedAt = this.#clock.now();
    safeLog(this.#logger, "info", {}, LOG.paused);
    this.#emit({ type: "paused" });
    while (room <= 0 && !signal.aborted) {
      await this.#store.waitForRoom(signal);
      if (!signal.aborted) room = await this.#store.room();
    }
    if (signal.aborted) return 0;
    this.#emit({ type: "resumed", pausedMs: this.#clock.now() - pausedAt });
    return room;
  }

  /** One getUpdates call; `undefined` after a failure has been waited out (or on abort). */
  async #poll(
    params: GetUpdatesParams,
    signal: AbortSignal,
  ): Promise<readonly Update[] | undefined> {
    // The store's answers before a poll are awaited: an abort meanwhile asks Telegram nothing.
    if (signal.aborted) return undefined;
    this.#state = "polling";
    this.#polls++;
    if (params.offset !== undefined) this.#sentOffset = params.offset;
    const startedAt = this.#clock.now();
    let updates: readonly Update[];
    try {
      updates = await this.#getUpdates(params, { signal });
      if (!Array.isArray(updates)) throw new TypeError("getUpdates did not return an array");
    } catch (error) {
      if (signal.aborted) return undefined;
      const failure = classifyPollingFailure(error);
      if (failure.kind === "stop") {
        safeLog(this.#logger, "error", { errorCode: failure.errorCode }, LOG.stopped);
        throw new PollingStoppedError(failure.errorCode, { cause: error });
      }
      if (failure.kind === "rate-limited") {
        this.#rateLimited++;
        const retryAfterMs = failure.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
        const delayMs = Math.min(
          this.#options.maxRetryAfterMs,
          Math.max(MIN_RETRY_AFTER_MS, retryAfterMs),
        );
        await this.#backOff("rate-limited", delayMs, 429, undefined, signal);
      } else {
        const delayMs = this.#nextBackoffMs();
        await this.#backOff("transient", delayMs, failure.errorCode, failure.code, signal);
      }
      return undefined;
    }
    if (signal.aborted) return undefined;
    this.#emit({
      type: "polled",
      offset: params.offset ?? null,
      received: updates.length,
      durationMs: this.#clock.now() - startedAt,
    });
    this.#fetched += updates.length;
    const { valid, invalid } = withValidIds(updates);
    if (invalid > 0) {
      this.#invalid += invalid;
      safeLog(this.#logger, "warn", { count: invalid }, LOG.invalid);
    }
    return valid;
  }

  /** After an empty answer and a quiet stretch: a probe without an offset, which confirms nothing. */
  async #probeIfQuiet(offset: number, signal: AbortSignal): Promise<void> {
    const now = this.#clock.now();
    if (now - this.#quietSince < QUIET_PROBE_MS) return;
    this.#quietSince = now;
    const updates = await this.#poll({ limit: 1, timeout: 0 }, signal);
    // An id at or above the offset came just now: the next poll fetches (and confirms) it.
    if (updates?.some((update) => update.update_id < offset)) {
      await this.#restartIds("probe", offset, signal);
    }
  }

  async #restartIds(source: "poll" | "probe", offset: number, signal: AbortSignal): Promise<void> {
    this.#state = "restarting";
    const startedAt = this.#clock.now();
    await this.#store.restartIds(signal);
    this.#idRestarts++;
    this.#sentOffset = undefined;
    this.#backoffMs = BACKOFF_START_MS;
    this.#quietSince = this.#clock.now();
    safeLog(this.#logger, "warn", { offset }, LOG.restarted);
    this.#emit({
      type: "ids-restarted",
      source,
      offset,
      waitedMs: this.#clock.now() - startedAt,
    });
  }

  #nextBackoffMs(): number {
    const delayMs = this.#backoffMs;
    this.#backoffMs = Math.min(BACKOFF_MAX_MS, delayMs * 2);
    return delayMs;
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
    const message = reason === "journal" ? LOG.storeFailed : LOG.pollFailed;
    safeLog(this.#logger, "warn", { reason, errorCode, code, delayMs }, message);
    this.#emit({ type: "backoff", reason, delayMs, errorCode: errorCode ?? null });
    await this.#clock.sleep(delayMs, { signal }).catch(noop);
  }

  #emit(event: PollingEvent): void {
    if (this.#onEvent === undefined) return;
    try {
      this.#onEvent(Object.freeze(event));
    } catch {
      // A diagnostics listener cannot break polling.
    }
  }
}

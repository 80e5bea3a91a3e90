// SharedPoller: long polling for a bot that runs as several processes. Every process may run one;
// a lease in Redis elects the one that polls, renews it while it lives, and another process takes
// over when the holder dies. The holder polls on update-dispatch's PollingLoop into the
// RedisUpdateQueue, so each batch is stored before the next getUpdates confirms it.

import { checkOptions, onAbort, safeLog } from "@telepace/core";
import {
  type GetUpdates,
  PollingLoop,
  type PollingOptions,
  type PollingStore,
  pollingDefaults,
} from "@telepace/update-dispatch";
import {
  LEASE_HOLDER_OPTION_NAMES,
  type LeaseHolderOptions,
  type ResolvedLeaseHolder,
  resolveLeaseHolder,
} from "./lease-holder.js";
import { LeaseRenewal } from "./lease-renewal.js";
import type { RedisUpdateQueue } from "./redis-update-queue.js";

/**
 * Options of {@link SharedPoller}: the polling options of `@telepace/update-dispatch`'s
 * `PollingLoop` (`pollLimit`, `pollTimeoutSeconds`, `allowedUpdates`, `maxRetryAfterMs`,
 * `journalFailure`), and `clock` and `logger` as in {@link LeaseHolderOptions}.
 */
export interface SharedPollerOptions extends PollingOptions, LeaseHolderOptions {
  /** Calls the Bot API's `getUpdates`; pass the signal on (it aborts when the lease is lost). */
  readonly getUpdates: GetUpdates;
  /** Names this process in the lease. @defaultValue `"<pid>-<random>"` */
  readonly pollerId?: string | undefined;
  /**
   * How long the lease lasts without renewal, in ms: the gap before another process polls after
   * the poller dies. It is renewed every third, so a poller steps down only after missing
   * several renewals. >= 100. @defaultValue 1500
   */
  readonly leaseMs?: number | undefined;
}

/** Defaults of {@link SharedPollerOptions}. */
export const sharedPollerDefaults = Object.freeze({ ...pollingDefaults, leaseMs: 1_500 });

/** A fresh view of a {@link SharedPoller}. */
export interface SharedPollerSnapshot {
  readonly pollerId: string;
  /** Whether this process holds the lease and polls. */
  readonly isLeader: boolean;
  /** Times this process took the lease. */
  readonly elected: number;
  /** `getUpdates` calls, ever. */
  readonly polls: number;
  readonly appended: number;
  readonly duplicates: number;
  /** Failed `getUpdates` (429s included) or queue calls, each followed by a delay. */
  readonly failures: number;
  /** 429s from `getUpdates`, ever. */
  readonly rateLimited: number;
  /** Polls held back because the queue held `maxUnfinished` updates. */
  readonly pauses: number;
  /** Times the update ids restarted lower and the queue forgot the old ones, ever. */
  readonly idRestarts: number;
}

const KNOWN = Object.keys({
  getUpdates: true,
  pollerId: true,
  leaseMs: true,
  pollLimit: true,
  pollTimeoutSeconds: true,
  allowedUpdates: true,
  maxRetryAfterMs: true,
  journalFailure: true,
  clock: true,
  logger: true,
} satisfies Record<keyof SharedPollerOptions, true>);

/** The keys the lease holder reads; the others are PollingLoop's. */
const HOLDER_KEYS: ReadonlySet<string> = new Set(["pollerId", ...LEASE_HOLDER_OPTION_NAMES]);

const LEASE_NAME = "poller";
/** How often a full queue, or one whose old numbering is unfinished, is asked again. */
const QUEUE_CHECK_MS = 100;
const MAX_BACKOFF_MS = 5_000;

const LOG = Object.freeze({
  elected: "Took the poller lease: this process polls",
  lost: "Lost the poller lease: another process polls",
  failed: "The poller lease could not be taken (Redis unreachable); retrying after a delay",
});

function noop(): void {}

/**
 * Runs in every process; exactly one polls at a time. `run()` resolves when aborted or closed.
 * Polling follows `PollingLoop`'s rules: 429s wait `retry_after`, other failures back off, 409
 * (a webhook is set, or a poller outside this group) and 401/404 stop it, and update ids that
 * restart lower make the queue forget the old ones once nothing of theirs is unfinished.
 *
 * @example
 * const poller = new SharedPoller(queue, { getUpdates: (p, o) => client.getUpdates(p, o) });
 * void poller.run({ signal: shutdown.signal });
 */
export class SharedPoller implements AsyncDisposable {
  readonly #queue: RedisUpdateQueue;
  readonly #holder: ResolvedLeaseHolder;
  readonly #polling: PollingLoop;
  readonly #stopper = new AbortController();
  #leader: AbortController | undefined;
  #renewal: LeaseRenewal | undefined;
  #loop: Promise<void> | undefined;
  #elected = 0;
  #appended = 0;
  #duplicates = 0;
  #leaseFailures = 0;

  /** @throws {TypeError|RangeError} naming the option, when an option is malformed. */
  constructor(queue: RedisUpdateQueue, options: SharedPollerOptions) {
    this.#queue = queue;
    const given = checkOptions("options", options, KNOWN);
    this.#holder = resolveLeaseHolder(given, "pollerId", sharedPollerDefaults.leaseMs);
    const polling = Object.fromEntries(
      Object.entries(given).filter(([key]) => !HOLDER_KEYS.has(key)),
    ) as PollingOptions;
    this.#polling = new PollingLoop(this.#store(), {
      ...polling,
      getUpdates: given.getUpdates as GetUpdates,
      clock: this.#holder.clock,
      logger: this.#holder.logger,
    });
  }

  /**
   * Competes for the lease and polls while holding it, until aborted or closed.
   *
   * @throws {PollingStoppedError} (rejects) on 409 and 401/404 (from `@telepace/update-dispatch`),
   *   after giving the lease up: another process would fail the same way.
   * @throws {UpdateDispatchError} (rejects) `ERR_POLLING_JOURNAL_FAILED` when the queue failed and
   *   `journalFailure` is `"reject"`.
   */
  run(options: { readonly signal?: AbortSignal | undefined } = {}): Promise<void> {
    if (this.#loop !== undefined) return this.#loop;
    const unsubscribe = onAbort(options.signal, () => void this.close());
    if (options.signal?.aborted) void this.close();
    this.#loop = this.#runLoop().finally(unsubscribe);
    return this.#loop;
  }

  snapshot(): SharedPollerSnapshot {
    const polling = this.#polling.snapshot();
    return Object.freeze({
      pollerId: this.#holder.id,
      isLeader: this.#leader !== undefined,
      elected: this.#elected,
      polls: polling.polls,
      appended: this.#appended,
      duplicates: this.#duplicates,
      failures: polling.backoffs + this.#leaseFailures,
      rateLimited: polling.rateLimited,
      pauses: polling.pauses,
      idRestarts: polling.idRestarts,
    });
  }

  /** Stops polling and gives the lease up at once, so another process takes over without delay. */
  async close(): Promise<void> {
    this.#stopper.abort();
    this.#leader?.abort();
    await this.#loop?.catch(noop);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** The queue as the polling loop's store. */
  #store(): PollingStore {
    const queue = this.#queue;
    const wait = (signal: AbortSignal) =>
      this.#holder.clock.sleep(QUEUE_CHECK_MS, { signal }).catch(noop);
    return {
      // The append script stores up to the bound itself; the loop only needs to know "any".
      room: async () => ((await queue.hasRoom()) ? Number.POSITIVE_INFINITY : 0),
      waitForRoom: wait,
      highestUpdateId: () => queue.highestUpdateId(),
      append: async (updates) => {
        const result = await queue.append(updates);
        this.#appended += result.appended.length;
        this.#duplicates += result.duplicates;
      },
      restartIds: async (signal) => {
        while (!(await queue.restartIds())) {
          await wait(signal);
          signal.throwIfAborted();
        }
      },
    };
  }

  async #runLoop(): Promise<void> {
    const stop = this.#stopper.signal;
    const { id, leaseMs } = this.#holder;
    let backoffMs = QUEUE_CHECK_MS;
    try {
      while (!stop.aborted) {
        let isTaken: boolean;
        try {
          isTaken = await this.#queue.lease(LEASE_NAME, id, leaseMs, "take");
          backoffMs = QUEUE_CHECK_MS;
        } catch {
          this.#leaseFailures++;
          safeLog(this.#holder.logger, "error", { pollerId: id }, LOG.failed);
          await this.#pause(backoffMs);
          backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
          continue;
        }
        if (!isTaken) {
          await this.#pause(leaseMs / 4);
          continue;
        }
        const leader = this.#becomeLeader();
        // Resolves when the lease is lost or the poller closes; rejects when polling must stop.
        await this.#polling.run({ signal: leader.signal });
        this.#stepDown(!stop.aborted);
      }
    } finally {
      this.#stepDown(false);
      await this.#queue.lease(LEASE_NAME, id, leaseMs, "release").catch(noop);
    }
  }

  #becomeLeader(): AbortController {
    const leader = new AbortController();
    this.#leader = leader;
    this.#elected++;
    const { id, leaseMs, clock, logger } = this.#holder;
    safeLog(logger, "info", { pollerId: id }, LOG.elected);
    const renewal = new LeaseRenewal(clock, leaseMs / 3, async () => {
      let isHeld = false;
      try {
        isHeld = await this.#queue.lease(LEASE_NAME, id, leaseMs, "renew");
      } catch {
        // Redis unreachable: the lease may lapse; stop polling before another process starts.
      }
      // A renewal of an earlier term that lands late leaves the current one alone.
      if (!isHeld && this.#renewal === renewal) this.#stepDown(true);
      return isHeld;
    });
    this.#renewal = renewal;
    renewal.start();
    return leader;
  }

  #stepDown(isLost: boolean): void {
    this.#renewal?.stop();
    this.#renewal = undefined;
    if (this.#leader === undefined) return;
    this.#leader.abort();
    this.#leader = undefined;
    if (isLost) safeLog(this.#holder.logger, "warn", { pollerId: this.#holder.id }, LOG.lost);
  }

  #pause(ms: number): Promise<void> {
    return this.#holder.clock.sleep(ms, { signal: this.#stopper.signal }).catch(noop);
  }
}

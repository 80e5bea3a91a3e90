// SharedPoller: long polling for a bot that runs as several processes. Every process may run one;
// a lease in Redis elects the one that polls, renews it while it lives, and another process takes
// over when the holder dies. Updates are stored in the RedisUpdateQueue before the next
// getUpdates confirms them.

import {
  type Clock,
  checkClock,
  checkFunction,
  checkLogger,
  checkNumber,
  checkOptions,
  type Logger,
  safeLog,
  systemClock,
} from "@telepace/core";
import type { GetUpdates } from "@telepace/update-dispatch";
import { LeaseRenewal } from "./lease-renewal.js";
import type { RedisUpdateQueue } from "./redis-update-queue.js";

/** Options of {@link SharedPoller}. */
export interface SharedPollerOptions {
  /** Calls the Bot API's `getUpdates`; pass the signal on (it aborts when the lease is lost). */
  readonly getUpdates: GetUpdates;
  /** Names this process in the lease. @defaultValue `"<pid>-<random>"` */
  readonly pollerId?: string | undefined;
  /**
   * How long the lease lasts without renewal, in ms: the gap before another process polls after
   * the poller dies. >= 100. @defaultValue 10000
   */
  readonly leaseMs?: number | undefined;
  /** Long-poll timeout in seconds, 0–50. @defaultValue 25 */
  readonly pollTimeoutSeconds?: number | undefined;
  /** Updates per `getUpdates`, 1–100. @defaultValue 100 */
  readonly pollLimit?: number | undefined;
  readonly clock?: Clock | undefined;
  /** pino-compatible; fixed messages only. */
  readonly logger?: Logger | undefined;
}

/** Defaults of {@link SharedPollerOptions}. */
export const sharedPollerDefaults = Object.freeze({
  leaseMs: 10_000,
  pollTimeoutSeconds: 25,
  pollLimit: 100,
});

/** A fresh view of a {@link SharedPoller}. */
export interface SharedPollerSnapshot {
  readonly pollerId: string;
  /** Whether this process holds the lease and polls. */
  readonly isLeader: boolean;
  /** Times this process took the lease. */
  readonly elected: number;
  readonly polls: number;
  readonly appended: number;
  readonly duplicates: number;
  /** Failed `getUpdates` or queue calls, each followed by a delay. */
  readonly failures: number;
  /** Polls skipped because the queue held `maxUnfinished` updates. */
  readonly pauses: number;
}

const KNOWN = Object.keys({
  getUpdates: true,
  pollerId: true,
  leaseMs: true,
  pollTimeoutSeconds: true,
  pollLimit: true,
  clock: true,
  logger: true,
} satisfies Record<keyof SharedPollerOptions, true>);

const LEASE_NAME = "poller";
const MAX_BACKOFF_MS = 5_000;

const LOG = Object.freeze({
  elected: "Took the poller lease: this process polls",
  lost: "Lost the poller lease: another process polls",
  failed: "Polling failed; retrying after a delay",
});

/**
 * Runs in every process; exactly one polls at a time. `run()` resolves when aborted or closed.
 *
 * @example
 * const poller = new SharedPoller(queue, { getUpdates: (p, o) => client.getUpdates(p, o) });
 * void poller.run({ signal: shutdown.signal });
 */
export class SharedPoller implements AsyncDisposable {
  readonly #queue: RedisUpdateQueue;
  readonly #getUpdates: GetUpdates;
  readonly #pollerId: string;
  readonly #leaseMs: number;
  readonly #timeout: number;
  readonly #limit: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #stopper = new AbortController();
  #leader: AbortController | undefined;
  #renewal: LeaseRenewal | undefined;
  #loop: Promise<void> | undefined;
  #elected = 0;
  #polls = 0;
  #appended = 0;
  #duplicates = 0;
  #failures = 0;
  #pauses = 0;

  /** @throws {TypeError|RangeError} naming the option, when an option is malformed. */
  constructor(queue: RedisUpdateQueue, options: SharedPollerOptions) {
    this.#queue = queue;
    const given = checkOptions("options", options, KNOWN);
    this.#getUpdates = checkFunction<GetUpdates>("getUpdates", given.getUpdates);
    const number = (name: string, fallback: number, rule: Parameters<typeof checkNumber>[2]) =>
      given[name] === undefined ? fallback : checkNumber(name, given[name], rule);
    this.#leaseMs = number("leaseMs", sharedPollerDefaults.leaseMs, { min: 100 });
    this.#timeout = number("pollTimeoutSeconds", sharedPollerDefaults.pollTimeoutSeconds, {
      integer: true,
      min: 0,
      max: 50,
    });
    this.#limit = number("pollLimit", sharedPollerDefaults.pollLimit, {
      integer: true,
      min: 1,
      max: 100,
    });
    if (
      given.pollerId !== undefined &&
      (typeof given.pollerId !== "string" || given.pollerId === "")
    ) {
      throw new TypeError("Expected `pollerId` to be a non-empty string");
    }
    this.#pollerId =
      (given.pollerId as string | undefined) ??
      `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    this.#clock = checkClock(given.clock, systemClock);
    this.#logger = given.logger === undefined ? checkLogger(undefined) : checkLogger(given.logger);
  }

  /** Competes for the lease and polls while holding it, until aborted or closed. */
  run(options: { readonly signal?: AbortSignal | undefined } = {}): Promise<void> {
    if (this.#loop !== undefined) return this.#loop;
    options.signal?.addEventListener("abort", () => void this.close(), { once: true });
    this.#loop = this.#runLoop();
    return this.#loop;
  }

  snapshot(): SharedPollerSnapshot {
    return Object.freeze({
      pollerId: this.#pollerId,
      isLeader: this.#leader !== undefined,
      elected: this.#elected,
      polls: this.#polls,
      appended: this.#appended,
      duplicates: this.#duplicates,
      failures: this.#failures,
      pauses: this.#pauses,
    });
  }

  /** Stops polling and gives the lease up at once, so another process takes over without delay. */
  async close(): Promise<void> {
    this.#stopper.abort();
    this.#leader?.abort();
    await this.#loop;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #runLoop(): Promise<void> {
    const stop = this.#stopper.signal;
    let backoffMs = 100;
    while (!stop.aborted) {
      let leader: AbortController | undefined;
      try {
        if (this.#leader === undefined) {
          if (!(await this.#queue.lease(LEASE_NAME, this.#pollerId, this.#leaseMs, "take"))) {
            await this.#pause(this.#leaseMs / 4);
            continue;
          }
          this.#becomeLeader();
        }
        leader = this.#leader as AbortController;
        await this.#pollOnce(leader);
        backoffMs = 100;
      } catch {
        if (stop.aborted) break;
        // The lease was lost mid-poll: compete again, no failure.
        if (leader?.signal.aborted) continue;
        this.#failures++;
        safeLog(this.#logger, "error", { pollerId: this.#pollerId }, LOG.failed);
        await this.#pause(backoffMs);
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
      }
    }
    this.#stepDown(false);
    await this.#queue.lease(LEASE_NAME, this.#pollerId, this.#leaseMs, "release").catch(() => {});
  }

  async #pollOnce(leader: AbortController): Promise<void> {
    if (!(await this.#queue.hasRoom())) {
      this.#pauses++;
      await this.#pause(100);
      return;
    }
    const highest = await this.#queue.highestUpdateId();
    this.#polls++;
    const updates = await this.#getUpdates(
      {
        ...(highest === undefined ? {} : { offset: highest + 1 }),
        limit: this.#limit,
        timeout: this.#timeout,
      },
      { signal: leader.signal },
    );
    if (updates.length === 0) return;
    const result = await this.#queue.append(updates);
    this.#appended += result.appended.length;
    this.#duplicates += result.duplicates;
  }

  #becomeLeader(): void {
    this.#leader = new AbortController();
    this.#elected++;
    safeLog(this.#logger, "info", { pollerId: this.#pollerId }, LOG.elected);
    const renewal = new LeaseRenewal(this.#clock, this.#leaseMs / 3, async () => {
      let held = false;
      try {
        held = await this.#queue.lease(LEASE_NAME, this.#pollerId, this.#leaseMs, "renew");
      } catch {
        // Redis unreachable: the lease may lapse; stop polling before another process starts.
      }
      // A renewal of an earlier term that lands late leaves the current one alone.
      if (!held && this.#renewal === renewal) this.#stepDown(true);
      return held;
    });
    this.#renewal = renewal;
    renewal.start();
  }

  #stepDown(lost: boolean): void {
    this.#renewal?.stop();
    this.#renewal = undefined;
    if (this.#leader === undefined) return;
    this.#leader.abort();
    this.#leader = undefined;
    if (lost) safeLog(this.#logger, "warn", { pollerId: this.#pollerId }, LOG.lost);
  }

  #pause(ms: number): Promise<void> {
    return this.#clock.sleep(ms, { signal: this.#stopper.signal }).catch(() => {});
  }
}

// SharedUpdateWorker: one process's share of the work. It claims ready principals from the
// RedisUpdateQueue up to its concurrency, runs each claimed update through the processor (within
// its timeout, if it has one), keeps its leases alive with heartbeats and completes each update
// when its processing ends. A claim that failed is asked again under the same claim id, so one
// that Redis ran after the client gave up is taken up instead of waiting out its lease.

import { randomBytes } from "node:crypto";
import type { Update } from "@grammyjs/types";
import {
  type Clock,
  checkFunction,
  checkNumber,
  checkOptions,
  type Logger,
  safeLog,
} from "@telepace/core";
import { UpdateDispatchError } from "@telepace/update-dispatch";
import { type LeaseHolderOptions, resolveLeaseHolder } from "./lease-holder.js";
import { LeaseRenewal } from "./lease-renewal.js";
import type { QueueClaim, RedisUpdateQueue } from "./redis-update-queue.js";

/**
 * Runs one update. The signal aborts when its `timeoutMs` elapses (`reason` an
 * `UpdateDispatchError` with code `ERR_UPDATE_TIMEOUT`, as `UpdateDispatcher`'s), when its lease
 * is lost, or when `close()` gives up waiting; pass it to every call the processor makes.
 */
export type SharedUpdateProcessor = (update: Update, signal: AbortSignal) => unknown;

/** Options of {@link SharedUpdateWorker}; `clock` and `logger` as in {@link LeaseHolderOptions}. */
export interface SharedUpdateWorkerOptions extends LeaseHolderOptions {
  /** Names this worker in leases; unique per process. @defaultValue `"<pid>-<random>"` */
  readonly workerId?: string | undefined;
  /** Updates in processing at once (each of a different principal). Integer >= 1. @defaultValue 16 */
  readonly concurrency?: number | undefined;
  /**
   * How long a claim stays ours without a heartbeat, in ms: after a crash (or a stall longer than
   * this), the principals move to another worker this long after the last heartbeat. >= 100.
   * @defaultValue 1500
   */
  readonly leaseMs?: number | undefined;
  /**
   * How often leases are extended, in ms; below `leaseMs`. The default renews five times per
   * lease, so a worker is taken for dead only after missing several renewals in a row.
   * @defaultValue `leaseMs / 5`
   */
  readonly heartbeatMs?: number | undefined;
  /**
   * Most updates of one chat in processing at once, over every worker of the bot (give all the
   * same): the other people of a chat whose replies wait (a 429's freeze of a group, its 20
   * messages a minute) wait in the queue rather than take every slot from other chats. 0: no
   * bound. Integer >= 0. @defaultValue 8
   */
  readonly maxPerChat?: number | undefined;
  /** How long to wait before asking again when nothing is ready, in ms. > 0. @defaultValue 25 */
  readonly idleMs?: number | undefined;
  /**
   * Milliseconds one update may run. When it elapses the processor's signal is aborted, the update
   * counts as finished (`timedOut`) and is completed (it never runs again), its concurrency slot
   * and its principal's lease are freed and the principal goes on with its next update, here or
   * on any worker; a result that arrives later is ignored. Without it a processor that never
   * settles holds its principal for good (the heartbeat keeps the lease). Finite number > 0 and
   * <= 2147483647, or `undefined` for no timeout, as `UpdateDispatcher`'s `timeoutMs`.
   * @defaultValue undefined (no timeout)
   */
  readonly timeoutMs?: number | undefined;
}

/** Defaults of {@link SharedUpdateWorkerOptions}. */
export const sharedUpdateWorkerDefaults = Object.freeze({
  concurrency: 16,
  leaseMs: 1_500,
  /** Renewals per lease: `heartbeatMs` defaults to `leaseMs` divided by this. */
  renewalsPerLease: 5,
  maxPerChat: 8,
  idleMs: 25,
});

/** A fresh view of a {@link SharedUpdateWorker}. */
export interface SharedUpdateWorkerSnapshot {
  readonly workerId: string;
  readonly state: "idle" | "running" | "closing" | "closed";
  /** Updates in processing now. */
  readonly processing: number;
  readonly claimed: number;
  readonly completed: number;
  /** Processors that threw or rejected (their update is still completed: it never runs again). */
  readonly failed: number;
  /** Updates whose processing ran past `timeoutMs` (completed, not run again). */
  readonly timedOut: number;
  /** Claims whose lease was lost before they completed (they run again elsewhere). */
  readonly leasesLost: number;
  /** Claims of updates another worker had started (a hand-over after a crash or a lost lease). */
  readonly handedOver: number;
  /** Queue calls that failed (Redis unreachable); retried with backoff. */
  readonly queueFailures: number;
}

const KNOWN = Object.keys({
  workerId: true,
  concurrency: true,
  leaseMs: true,
  heartbeatMs: true,
  maxPerChat: true,
  idleMs: true,
  timeoutMs: true,
  clock: true,
  logger: true,
} satisfies Record<keyof SharedUpdateWorkerOptions, true>);

const LOG = Object.freeze({
  failed: "An update's processing failed; it is completed and not run again",
  timedOut: "An update's processing timed out; its signal was aborted and it is completed",
  queueFailed: "The shared update queue failed; retrying after a delay",
  leaseLost: "Lost the lease of an update; another worker runs it (or ran it) again",
});

const MAX_BACKOFF_MS = 2_000;
/** How long a completion is asked again while Redis does not answer, ms. */
const COMPLETE_RETRY_MS = 30_000;

function newClaimId(): string {
  return randomBytes(6).toString("base64url");
}

interface Running {
  readonly claim: QueueClaim;
  readonly controller: AbortController;
  /** Its completion was sent: a heartbeat that finds the lease gone finds it completed. */
  isCompleting: boolean;
}

/**
 * Takes work from a {@link RedisUpdateQueue}: run one per process (or several), each claims ready
 * principals up to `concurrency`, so updates of one person run in order on whichever worker has
 * room and different people run in parallel everywhere.
 *
 * @example
 * const worker = new SharedUpdateWorker(queue, async (update, signal) => bot.handle(update, signal));
 * const running = worker.run({ signal: shutdown.signal });
 * // …
 * await worker.close({ timeoutMs: 10_000 });
 */
export class SharedUpdateWorker implements AsyncDisposable {
  readonly #queue: RedisUpdateQueue;
  readonly #processor: SharedUpdateProcessor;
  readonly #workerId: string;
  readonly #concurrency: number;
  readonly #leaseMs: number;
  readonly #heartbeatMs: number;
  readonly #maxPerChat: number;
  readonly #idleMs: number;
  readonly #timeoutMs: number | undefined;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #running = new Set<Running>();
  readonly #stopper = new AbortController();
  #state: SharedUpdateWorkerSnapshot["state"] = "idle";
  #loop: Promise<void> | undefined;
  readonly #heartbeat: LeaseRenewal;
  #wake: (() => void) | undefined;
  #claimed = 0;
  #completed = 0;
  #failed = 0;
  #timedOut = 0;
  #leasesLost = 0;
  #handedOver = 0;
  #queueFailures = 0;

  /** @throws {TypeError|RangeError} naming the option, when an option is malformed. */
  constructor(
    queue: RedisUpdateQueue,
    processor: SharedUpdateProcessor,
    options: SharedUpdateWorkerOptions = {},
  ) {
    this.#queue = queue;
    this.#processor = checkFunction<SharedUpdateProcessor>("processor", processor);
    const given = checkOptions("options", options, KNOWN);
    const holder = resolveLeaseHolder(given, "workerId", sharedUpdateWorkerDefaults.leaseMs);
    const number = (name: string, fallback: number, rule: Parameters<typeof checkNumber>[2]) =>
      given[name] === undefined ? fallback : checkNumber(name, given[name], rule);
    this.#concurrency = number("concurrency", sharedUpdateWorkerDefaults.concurrency, {
      integer: true,
      min: 1,
    });
    this.#leaseMs = holder.leaseMs;
    this.#heartbeatMs = number(
      "heartbeatMs",
      this.#leaseMs / sharedUpdateWorkerDefaults.renewalsPerLease,
      { greaterThan: 0, max: this.#leaseMs - 1 },
    );
    this.#maxPerChat = number("maxPerChat", sharedUpdateWorkerDefaults.maxPerChat, {
      integer: true,
      min: 0,
    });
    this.#idleMs = number("idleMs", sharedUpdateWorkerDefaults.idleMs, { greaterThan: 0 });
    this.#timeoutMs =
      given.timeoutMs === undefined
        ? undefined
        : checkNumber("timeoutMs", given.timeoutMs, { greaterThan: 0, max: 2_147_483_647 });
    this.#workerId = holder.id;
    this.#clock = holder.clock;
    this.#logger = holder.logger;
    this.#heartbeat = new LeaseRenewal(this.#clock, this.#heartbeatMs, async () => {
      await this.#beat();
      return true;
    });
  }

  /** Claims and processes until aborted or closed; resolves when the claim loop has stopped. */
  run(options: { readonly signal?: AbortSignal | undefined } = {}): Promise<void> {
    if (this.#loop !== undefined) return this.#loop;
    const signal = options.signal;
    signal?.addEventListener("abort", () => void this.close(), { once: true });
    this.#state = "running";
    this.#heartbeat.start();
    this.#loop = this.#claimLoop();
    return this.#loop;
  }

  snapshot(): SharedUpdateWorkerSnapshot {
    return Object.freeze({
      workerId: this.#workerId,
      state: this.#state,
      processing: this.#running.size,
      claimed: this.#claimed,
      completed: this.#completed,
      failed: this.#failed,
      timedOut: this.#timedOut,
      leasesLost: this.#leasesLost,
      handedOver: this.#handedOver,
      queueFailures: this.#queueFailures,
    });
  }

  /**
   * Stops claiming and waits up to `timeoutMs` for updates in processing; the rest are aborted
   * and, their leases left to expire, run again on another worker.
   */
  async close(options: { readonly timeoutMs?: number | undefined } = {}): Promise<void> {
    if (this.#state === "closed" || this.#state === "closing") return this.#loop;
    const timeoutMs = checkNumber("timeoutMs", options.timeoutMs ?? 10_000, { min: 0 });
    this.#state = "closing";
    this.#stopper.abort();
    this.#wake?.();
    await this.#loop;
    const deadline = this.#clock.now() + timeoutMs;
    while (this.#running.size > 0 && this.#clock.now() < deadline) {
      await this.#clock.sleep(Math.min(this.#idleMs, Math.max(1, deadline - this.#clock.now())));
    }
    for (const running of this.#running) running.controller.abort(new Error("worker closed"));
    this.#heartbeat.stop();
    this.#state = "closed";
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #claimLoop(): Promise<void> {
    let backoffMs = this.#idleMs;
    const stop = this.#stopper.signal;
    // Kept until a claim call answers: a retry then finds what a lost call leased, if anything.
    let claimId = newClaimId();
    while (!stop.aborted) {
      if (this.#running.size >= this.#concurrency) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
        continue;
      }
      let claim: QueueClaim | undefined;
      try {
        claim = await this.#queue.claim(this.#workerId, this.#leaseMs, {
          claimId,
          maxPerChat: this.#maxPerChat,
        });
        claimId = newClaimId();
        backoffMs = this.#idleMs;
      } catch (error) {
        this.#queueFailed(error);
        await this.#pause(backoffMs);
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
        continue;
      }
      if (claim === undefined) {
        await this.#pause(this.#idleMs);
        continue;
      }
      // Claimed while closing too: running it is quicker than letting its lease lapse.
      this.#start(claim);
    }
  }

  #start(claim: QueueClaim): void {
    this.#claimed++;
    if (claim.deliveries > 1) this.#handedOver++;
    const running: Running = { claim, controller: new AbortController(), isCompleting: false };
    this.#running.add(running);
    void this.#process(running);
  }

  async #process(running: Running): Promise<void> {
    const ending = await this.#run(running);
    // A lost lease (or close) aborted the signal: the update runs again elsewhere. A timeout
    // aborted it too, but the update is finished.
    if (ending === "timed-out" || !running.controller.signal.aborted) {
      running.isCompleting = true;
      await this.#complete(running.claim);
    }
    this.#running.delete(running);
    this.#wake?.();
  }

  /** Runs the processor until it settles or its timeout elapses, whichever comes first. */
  #run(running: Running): Promise<"settled" | "timed-out"> {
    const updateId = running.claim.update.update_id;
    const signal = running.controller.signal;
    return new Promise((resolve) => {
      let ended = false;
      const timeoutMs = this.#timeoutMs;
      const timer =
        timeoutMs === undefined
          ? undefined
          : this.#clock.setTimer(() => {
              // A lost lease or close came first: that is no timeout.
              if (ended || signal.aborted) return;
              ended = true;
              this.#timedOut++;
              safeLog(this.#logger, "warn", { updateId }, LOG.timedOut);
              // The signal aborts before the principal goes on, so the processor hears of its
              // timeout before the next update of its principal starts anywhere.
              running.controller.abort(
                new UpdateDispatchError(
                  "ERR_UPDATE_TIMEOUT",
                  `Processing the update took longer than timeoutMs (${timeoutMs} ms)`,
                ),
              );
              resolve("timed-out");
            }, timeoutMs);
      const settle = (failed: boolean) => {
        // A result after the timeout is ignored.
        if (ended) return;
        ended = true;
        timer?.cancel();
        if (failed) {
          this.#failed++;
          safeLog(this.#logger, "error", { updateId }, LOG.failed);
        }
        resolve("settled");
      };
      try {
        Promise.resolve(this.#processor(running.claim.update, signal)).then(
          () => settle(false),
          () => settle(true),
        );
      } catch {
        settle(true);
      }
    });
  }

  async #complete(claim: QueueClaim): Promise<void> {
    let backoffMs = this.#idleMs;
    // The lease is kept alive meanwhile (the update still counts as processing), and a
    // completion that Redis ran although its answer was lost answers `true` when asked again.
    const deadline = this.#clock.now() + COMPLETE_RETRY_MS;
    for (;;) {
      try {
        if (await this.#queue.complete(claim)) this.#completed++;
        else this.#lost(claim);
        return;
      } catch (error) {
        this.#queueFailed(error);
        // By now its lease has surely passed to another worker, which runs it again.
        if (this.#clock.now() + backoffMs > deadline) return;
        await this.#clock.sleep(backoffMs);
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
      }
    }
  }

  #lost(claim: QueueClaim): void {
    this.#leasesLost++;
    safeLog(this.#logger, "warn", { updateId: claim.update.update_id }, LOG.leaseLost);
  }

  async #beat(): Promise<void> {
    const running = [...this.#running];
    if (running.length === 0) return;
    try {
      const held = await this.#queue.heartbeat(
        running.map((r) => r.claim),
        this.#leaseMs,
      );
      running.forEach((r, index) => {
        // A completing update's own answer says whether its lease held.
        if (held[index] === false && this.#running.has(r) && !r.isCompleting) {
          this.#lost(r.claim);
          r.controller.abort(new Error("lease lost"));
        }
      });
    } catch (error) {
      this.#queueFailed(error);
    }
  }

  #queueFailed(error: unknown): void {
    this.#queueFailures++;
    const code =
      typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
    safeLog(
      this.#logger,
      "error",
      { code: typeof code === "string" ? code : "unknown" },
      LOG.queueFailed,
    );
  }

  #pause(ms: number): Promise<void> {
    return this.#clock.sleep(ms, { signal: this.#stopper.signal }).catch(() => {});
  }
}

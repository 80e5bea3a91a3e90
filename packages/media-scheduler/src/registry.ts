// The registry owns one lazily created scheduler per (data centre, direction), opens transfers,
// applies limits while running, and shuts everything down without losing a charge.

import {
  abortReason,
  checkClock,
  checkLogger,
  checkNumber,
  checkObject,
  checkOptionalNumber,
  checkOptions,
  checkSignal,
  createDeferred,
  onAbort,
  safeLog,
  systemClock,
} from "@telepace/core";
import type { MutableCounters, RegistryContext } from "./context.js";
import { MediaSchedulerError } from "./errors.js";
import { publish } from "./events.js";
import {
  checkDc,
  checkDirection,
  checkPriority,
  type MediaDc,
  type MediaDirection,
  type MediaPriority,
} from "./kinds.js";
import {
  checkKeys,
  limitKeys,
  type MediaSchedulerLimits,
  type MediaSchedulerRegistryOptions,
  mediaSchedulerDefaults,
  type ResolvedLimits,
  registryOptionKeys,
  resolveLimits,
} from "./options.js";
import { Scheduler } from "./scheduler.js";
import type { MediaSchedulerRegistrySnapshot, MediaSchedulerSnapshot } from "./snapshot.js";
import { MediaTransfer, type TransferContext } from "./transfer.js";

const closeKeys = ["timeoutMs", "signal"] as const;

/** Options of {@link MediaSchedulerRegistry.open}. */
export interface OpenTransferOptions {
  /** The data centre: an MTProto DC id, or the API host for the Bot API. */
  readonly dc: MediaDc;
  readonly direction: MediaDirection;
  /**
   * The file's size in bytes, an integer >= 0, or `undefined` when unknown (then the transfer is
   * large). @defaultValue undefined
   */
  readonly sizeBytes?: number | undefined;
  /** Default priority of the transfer's acquires. @defaultValue "foreground" */
  readonly priority?: MediaPriority | undefined;
}

/** Options of {@link MediaSchedulerRegistry.close}. */
export interface CloseOptions {
  /**
   * Give up waiting for live permits after this many milliseconds (by the registry's clock) and
   * reject with `ERR_CLOSE_TIMEOUT`. A finite number >= 0. @defaultValue wait until drained
   */
  readonly timeoutMs?: number | undefined;
  /** Aborting stops the wait and rejects with `signal.reason` (the registry stays closed). */
  readonly signal?: AbortSignal | undefined;
}

function newCounters(): MutableCounters {
  return {
    transfersOpened: 0,
    transfersClosed: 0,
    grants: 0,
    releases: 0,
    aborted: 0,
    rejectedClosed: 0,
    rejectedQueueFull: 0,
    rejectedOverBudget: 0,
    rebinds: 0,
    schedulersCreated: 0,
    schedulersEvicted: 0,
  };
}

/**
 * Fair byte budgets for file transfers. One scheduler per (data centre, direction) is created on
 * first use and evicted once fully drained; transfers opened here acquire a permit per chunk.
 * Different data centres, and uploads versus downloads, never contend with each other.
 *
 * @example
 * const registry = new MediaSchedulerRegistry();
 * using transfer = registry.open({ dc: "api.telegram.org", direction: "download", sizeBytes });
 * await using permit = await transfer.acquire(512 * 1024, { signal });
 * // … fetch the chunk …
 * await registry.close();
 */
export class MediaSchedulerRegistry implements AsyncDisposable {
  readonly #largeThreshold: number;
  readonly #schedulers: Record<MediaDirection, Map<MediaDc, Scheduler>> = {
    download: new Map(),
    upload: new Map(),
  };
  readonly #transfers = new Set<MediaTransfer>();
  readonly #context: RegistryContext;
  readonly #transferContext: TransferContext;
  #nextTransferNumber = 1;
  readonly #drained = createDeferred<void>();

  /**
   * @throws {TypeError} for options that are not an object, an unknown key (naming the closest
   * valid one) or a value of the wrong type; `RangeError` for a value out of range.
   */
  constructor(options?: MediaSchedulerRegistryOptions) {
    const given = checkKeys("options", options, registryOptionKeys);
    const limits = resolveLimits(given, mediaSchedulerDefaults);
    this.#largeThreshold = checkOptionalNumber(
      "largeTransferThresholdBytes",
      given.largeTransferThresholdBytes,
      mediaSchedulerDefaults.largeTransferThresholdBytes,
      { integer: true, min: 1 },
    );
    this.#context = {
      clock: checkClock(given.clock, systemClock),
      logger: checkLogger(given.logger),
      counters: newCounters(),
      limits,
      queuedRequests: 0,
      lastPermitId: 0,
      isClosed: false,
    };
    this.#transferContext = {
      registry: this.#context,
      schedulerFor: (dc, direction) => this.#schedulerFor(dc, direction),
      onClosed: (transfer) => {
        this.#transfers.delete(transfer);
        this.#context.counters.transfersClosed++;
      },
    };
  }

  /** The limits in force (frozen; change them with {@link MediaSchedulerRegistry.configure}). */
  get limits(): ResolvedLimits {
    return this.#context.limits;
  }

  /** Number of live schedulers. */
  get size(): number {
    return this.#schedulers.download.size + this.#schedulers.upload.size;
  }

  /** Whether {@link MediaSchedulerRegistry.close} was called. */
  get isClosed(): boolean {
    return this.#context.isClosed;
  }

  /**
   * Registers a transfer with the scheduler of (`dc`, `direction`), creating it on first use.
   * @throws {MediaSchedulerError} `ERR_REGISTRY_CLOSED` after {@link MediaSchedulerRegistry.close}.
   * @throws {TypeError | RangeError} for an invalid option, naming it.
   */
  open(options: OpenTransferOptions): MediaTransfer {
    // Checked by value; other keys are tolerated, so a richer record (a file's description) can
    // be passed as it is.
    checkObject("options", options);
    const dc = checkDc(options.dc);
    const direction = checkDirection(options.direction);
    const sizeBytes =
      options.sizeBytes === undefined
        ? undefined
        : checkNumber("sizeBytes", options.sizeBytes, { integer: true, min: 0 });
    const priority =
      options.priority === undefined ? "foreground" : checkPriority(options.priority);
    if (this.#context.isClosed) {
      throw new MediaSchedulerError(
        "ERR_REGISTRY_CLOSED",
        "The media scheduler registry is closed",
      );
    }
    const sizeClass =
      sizeBytes === undefined || sizeBytes >= this.#largeThreshold ? "large" : "small";
    const id = `${direction}-${this.#nextTransferNumber++}`;
    const transfer = new MediaTransfer(this.#transferContext, {
      id,
      dc,
      direction,
      sizeBytes,
      sizeClass,
      priority,
    });
    this.#transfers.add(transfer);
    this.#context.counters.transfersOpened++;
    return transfer;
  }

  /**
   * Changes limits while transfers run: every existing scheduler of a direction takes the new
   * values at once and grants whatever now fits. A smaller budget takes effect as permits
   * release (nothing granted is revoked); waiting acquires whose charge exceeds it reject with
   * `RangeError`. A smaller slot cap admits no new transfer until enough go idle. The update is
   * validated as a whole first, so an invalid one changes nothing.
   * @throws {TypeError | RangeError} naming the first invalid option.
   * @throws {MediaSchedulerError} `ERR_REGISTRY_CLOSED` after close.
   */
  configure(limits: MediaSchedulerLimits): void {
    const given = checkKeys("limits", checkObject("limits", limits), limitKeys);
    const next = resolveLimits(given, this.#context.limits);
    if (this.#context.isClosed) {
      throw new MediaSchedulerError(
        "ERR_REGISTRY_CLOSED",
        "The media scheduler registry is closed",
      );
    }
    this.#context.limits = next;
    for (const map of [this.#schedulers.download, this.#schedulers.upload]) {
      for (const scheduler of [...map.values()]) scheduler.applyLimits(next);
    }
  }

  /**
   * A fresh, frozen view of the live scheduler of (`dc`, `direction`), or `undefined` when none
   * exists (none is created).
   */
  schedulerSnapshot(dc: MediaDc, direction: MediaDirection): MediaSchedulerSnapshot | undefined {
    return this.#schedulers[checkDirection(direction)].get(dc)?.snapshot();
  }

  /** A fresh, frozen view of the registry and every live scheduler. */
  snapshot(): MediaSchedulerRegistrySnapshot {
    const schedulers: MediaSchedulerSnapshot[] = [];
    for (const map of [this.#schedulers.download, this.#schedulers.upload]) {
      for (const scheduler of map.values()) schedulers.push(scheduler.snapshot());
    }
    const context = this.#context;
    return Object.freeze({
      isClosed: this.#context.isClosed,
      openTransfers: this.#transfers.size,
      queuedRequests: context.queuedRequests,
      maxQueuedAcquires: context.limits.maxQueuedAcquires,
      backgroundGrantInterval: context.limits.backgroundGrantInterval,
      counters: Object.freeze({ ...context.counters }),
      schedulers: Object.freeze(schedulers),
    });
  }

  /**
   * Closes every transfer (their waiting acquires reject with `ERR_TRANSFER_CLOSED`) and refuses
   * new ones, at once. The returned promise resolves when every live permit has been released
   * and every scheduler evicted. Calling it again returns the same wait.
   * @returns rejects with `ERR_CLOSE_TIMEOUT` after `timeoutMs`, or with `signal.reason` on abort;
   * the registry stays closed either way and still drains as permits are released.
   */
  close(options?: CloseOptions): Promise<void> {
    const given = checkOptions("options", options, closeKeys);
    const signal = checkSignal("signal", given.signal);
    const timeoutMs =
      given.timeoutMs === undefined
        ? undefined
        : checkNumber("timeoutMs", given.timeoutMs, { min: 0 });
    if (!this.#context.isClosed) {
      // Set first: from here on no scheduler grants anything, not even between two closes.
      this.#context.isClosed = true;
      for (const transfer of [...this.#transfers]) transfer.close();
      this.#resolveIfDrained();
    }
    const drained = this.#drained.promise;
    if (signal === undefined && timeoutMs === undefined) return drained;
    if (this.size === 0) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (error?: unknown): void => {
        if (settled) return;
        settled = true;
        timer?.cancel();
        unsubscribe();
        if (error === undefined) resolve();
        else reject(error);
      };
      const unsubscribe = onAbort(signal, () => finish(abortReason(signal as AbortSignal)));
      const timer =
        timeoutMs === undefined
          ? undefined
          : this.#context.clock.setTimer(() => finish(this.#timeoutError(timeoutMs)), timeoutMs);
      drained.then(() => finish());
    });
  }

  /** Same as `close()`: resolves once every permit is released. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #schedulerFor(dc: MediaDc, direction: MediaDirection): Scheduler {
    const map = this.#schedulers[direction];
    let scheduler = map.get(dc);
    if (scheduler === undefined) {
      const created: Scheduler = new Scheduler(dc, direction, this.#context, () =>
        this.#evict(created),
      );
      scheduler = created;
      map.set(dc, scheduler);
      this.#context.counters.schedulersCreated++;
      safeLog(this.#context.logger, "debug", { dc, direction }, "media scheduler created");
    }
    return scheduler;
  }

  #evict(scheduler: Scheduler): void {
    const map = this.#schedulers[scheduler.direction];
    // Only the instance the map holds; a stale one must not remove its successor.
    if (map.get(scheduler.dc) !== scheduler) return;
    map.delete(scheduler.dc);
    this.#context.counters.schedulersEvicted++;
    safeLog(
      this.#context.logger,
      "debug",
      { dc: scheduler.dc, direction: scheduler.direction },
      "media scheduler evicted",
    );
    publish("evict", () => ({
      type: "evict",
      dc: scheduler.dc,
      direction: scheduler.direction,
      grants: scheduler.snapshot().grants,
    }));
    this.#resolveIfDrained();
  }

  #resolveIfDrained(): void {
    if (this.#context.isClosed && this.size === 0) this.#drained.resolve();
  }

  #timeoutError(timeoutMs: number): MediaSchedulerError {
    let livePermits = 0;
    let activeBytes = 0;
    const holders = new Set<string>();
    for (const map of [this.#schedulers.download, this.#schedulers.upload]) {
      for (const scheduler of map.values()) {
        for (const entry of scheduler.snapshot().transfers) {
          livePermits += entry.livePermits;
          activeBytes += entry.activeBytes;
          if (entry.livePermits > 0) holders.add(entry.transferId);
        }
      }
    }
    const shown = [...holders].slice(0, 10).join(", ");
    return new MediaSchedulerError(
      "ERR_CLOSE_TIMEOUT",
      `Media scheduler registry did not drain within ${timeoutMs} ms: ${livePermits} permits (${activeBytes} bytes) still live, held by ${shown}${holders.size > 10 ? ", …" : ""}`,
    );
  }
}

// A transfer is one file moving in one direction: the unit of fairness. It acquires a permit per
// chunk, can follow its file to another data centre, and closes without leaking capacity.

import { abortReason, checkNumber, checkSignal, onAbort, safeLog } from "@telepace/core";
import type { Binding, BindingOwner, Waiter } from "./binding.js";
import { chargeOf, mediaChargeUnitBytes } from "./charge.js";
import type { RegistryContext } from "./context.js";
import { MediaSchedulerError } from "./errors.js";
import { publish } from "./events.js";
import {
  checkDc,
  checkPriority,
  type MediaDc,
  type MediaDirection,
  type MediaPriority,
  type MediaSizeClass,
} from "./kinds.js";
import type { MediaPermit } from "./permit.js";
import type { MediaSchedulerSnapshot, MediaTransferSnapshot } from "./snapshot.js";

/** Options of {@link MediaTransfer.acquire}. */
export interface MediaAcquireOptions {
  /**
   * Aborting while the acquire waits removes it and rejects with `signal.reason`; aborting after
   * the grant but before the caller resumes releases the permit and rejects the same way.
   */
  readonly signal?: AbortSignal | undefined;
  /** Priority of this request only. @defaultValue the transfer's `priority` */
  readonly priority?: MediaPriority | undefined;
}

/** What the registry tells a transfer it opens. @internal */
export interface TransferDescriptor {
  readonly id: string;
  readonly dc: MediaDc;
  readonly direction: MediaDirection;
  readonly sizeBytes: number | undefined;
  readonly sizeClass: MediaSizeClass;
  readonly priority: MediaPriority;
}

/** How a transfer reaches the rest of its registry: shared data plus two callbacks. @internal */
export interface TransferContext {
  readonly registry: RegistryContext;
  /** The scheduler of (dc, direction), created on first use. */
  readonly schedulerFor: (dc: MediaDc, direction: MediaDirection) => BindingOwner;
  /** Called once, when the transfer closes. */
  readonly onClosed: (transfer: MediaTransfer) => void;
}

function noop(): void {}

const bytesRule = Object.freeze({ integer: true, min: 1 });

/**
 * One file transfer registered with a {@link MediaSchedulerRegistry}, bound to the scheduler of
 * its (data centre, direction). Acquire a permit before each chunk request; the scheduler shares
 * the byte budget fairly between transfers, not between requests.
 *
 * @example
 * using transfer = registry.open({ dc: "api.telegram.org", direction: "download", sizeBytes });
 * for (let offset = 0; offset < sizeBytes; offset += CHUNK) {
 *   await using permit = await transfer.acquire(Math.min(CHUNK, sizeBytes - offset), { signal });
 *   await fetchRange(offset, CHUNK, { signal });
 * }
 */
export class MediaTransfer implements Disposable {
  /** `"<direction>-<n>"`, unique within the registry. */
  readonly id: string;
  readonly direction: MediaDirection;
  /** The file size given at open, or `undefined` when unknown. */
  readonly sizeBytes: number | undefined;
  /** `large` when `sizeBytes` is unknown or at least the registry's large threshold. */
  readonly sizeClass: MediaSizeClass;
  /** The default priority of its acquires. */
  readonly priority: MediaPriority;
  readonly #context: TransferContext;
  readonly #bindings = new Map<BindingOwner, Binding>();
  #current: Binding;
  #isClosed = false;
  #closeMessage = "";
  #retiredGrants = 0;
  #retiredGrantedBytes = 0;

  /** @internal Transfers are opened through `MediaSchedulerRegistry.open`. */
  constructor(context: TransferContext, descriptor: TransferDescriptor) {
    this.#context = context;
    this.id = descriptor.id;
    this.direction = descriptor.direction;
    this.sizeBytes = descriptor.sizeBytes;
    this.sizeClass = descriptor.sizeClass;
    this.priority = descriptor.priority;
    this.#current = this.#bindTo(context.schedulerFor(descriptor.dc, descriptor.direction));
  }

  /** The data centre it is bound to now (where new acquires go). */
  get dc(): MediaDc {
    return this.#current.owner.dc;
  }

  /** Whether {@link MediaTransfer.close} (or the registry's close) was called. */
  get isClosed(): boolean {
    return this.#isClosed;
  }

  /**
   * Waits for a permit to move `bytes` bytes, charged as `bytes` rounded up to 64 KiB against
   * the current data centre's budget.
   *
   * @throws {RangeError} synchronously when `bytes` is not an integer >= 1 or its charge exceeds
   * the direction's `maxBytesInFlight` (it could never be granted).
   * @throws {TypeError} synchronously for a bad `priority` or `signal`.
   * @returns the permit. Rejects with `signal.reason` on abort, with a {@link MediaSchedulerError}
   * `ERR_TRANSFER_CLOSED` when the transfer is or becomes closed first, with `ERR_QUEUE_FULL`
   * when the registry's `maxQueuedAcquires` acquires already wait, and with a `RangeError` when
   * `configure()` shrinks the budget below the charge while it waits.
   */
  acquire(bytes: number, options?: MediaAcquireOptions): Promise<MediaPermit> {
    const charge = this.#checkCharge(bytes);
    // Checked by value, not for unknown keys: acquire is the hot path.
    const priority =
      options?.priority === undefined ? this.priority : checkPriority(options.priority);
    const signal = checkSignal("signal", options?.signal);
    if (this.#isClosed) return Promise.reject(this.#closedError());
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const shared = this.#context.registry;
    if (shared.queuedRequests >= shared.limits.maxQueuedAcquires) {
      shared.counters.rejectedQueueFull++;
      return Promise.reject(
        new MediaSchedulerError(
          "ERR_QUEUE_FULL",
          `${shared.queuedRequests} acquires are already waiting (maxQueuedAcquires is ${shared.limits.maxQueuedAcquires})`,
        ),
      );
    }
    let waiter: Waiter | undefined;
    const granted = new Promise<MediaPermit>((resolve, reject) => {
      waiter = {
        bytes,
        charge,
        priority,
        queuedAt: shared.clock.now(),
        resolve,
        reject,
        unsubscribe: noop,
        binding: this.#current,
        node: undefined,
      };
    });
    const queued = waiter as Waiter;
    if (signal !== undefined) {
      queued.unsubscribe = onAbort(signal, () => {
        // After a rebind the waiter lives at another scheduler: ask the one it is in now.
        queued.binding.owner.cancel(queued, abortReason(signal));
      });
    }
    this.#current.owner.enqueue(queued);
    if (signal === undefined) return granted;
    return granted.then((permit) => {
      if (!signal.aborted) return permit;
      // Granted, but the caller gave up before it could take the permit: give the bytes back.
      permit.release();
      shared.counters.aborted++;
      throw abortReason(signal);
    });
  }

  /**
   * Moves the transfer to data centre `dc` (on FILE_MIGRATE, say): waiting acquires move to the
   * new scheduler in their order; permits already granted stay charged at the old one until
   * released. Rebinding to the current data centre does nothing.
   * @throws {MediaSchedulerError} `ERR_TRANSFER_CLOSED` when the transfer is closed.
   * @throws {TypeError | RangeError} for an invalid `dc`.
   */
  rebind(dc: MediaDc): void {
    const target = checkDc(dc);
    if (this.#isClosed) throw this.#closedError();
    const from = this.#current;
    if (target === from.owner.dc) return;
    const scheduler = this.#context.schedulerFor(target, this.direction);
    const to = this.#bindings.get(scheduler) ?? this.#bindTo(scheduler);
    to.isCurrent = true;
    this.#current = to;
    const drainingPermits = from.livePermits;
    const moved = from.owner.moveTo(from, to);
    const registry = this.#context.registry;
    registry.counters.rebinds++;
    safeLog(
      registry.logger,
      "debug",
      { transferId: this.id, fromDc: from.owner.dc, toDc: target, moved },
      "media transfer rebound",
    );
    publish("rebind", () => ({
      type: "rebind",
      direction: this.direction,
      transferId: this.id,
      fromDc: from.owner.dc,
      toDc: target,
      movedRequests: moved,
      drainingPermits,
    }));
  }

  /**
   * Closes the transfer: waiting acquires and later ones reject with `ERR_TRANSFER_CLOSED`.
   * Live permits stay charged until their owners release them. Idempotent.
   */
  close(): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.#closeMessage = this.#context.registry.isClosed
      ? "the media scheduler registry was closed"
      : "the media transfer was closed";
    const reason = this.#closedError();
    for (const binding of [...this.#bindings.values()]) binding.owner.close(binding, reason);
    this.#context.onClosed(this);
  }

  /** Same as {@link MediaTransfer.close}, for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** A fresh, frozen view of the transfer across its current and draining bindings. */
  snapshot(): MediaTransferSnapshot {
    let livePermits = 0;
    let activeBytes = 0;
    let grants = this.#retiredGrants;
    let grantedBytes = this.#retiredGrantedBytes;
    const drainingDcs: MediaDc[] = [];
    for (const binding of this.#bindings.values()) {
      livePermits += binding.livePermits;
      activeBytes += binding.liveBytes;
      grants += binding.grants;
      grantedBytes += binding.grantedBytes;
      if (!binding.isCurrent) drainingDcs.push(binding.owner.dc);
    }
    const current = this.#current;
    return Object.freeze({
      id: this.id,
      dc: current.owner.dc,
      direction: this.direction,
      sizeBytes: this.sizeBytes,
      sizeClass: this.sizeClass,
      priority: this.priority,
      isClosed: this.#isClosed,
      queuedRequests: current.waiters.size,
      queuedBytes: current.queuedBytes,
      livePermits,
      activeBytes,
      grants,
      grantedBytes,
      deficitBytes: current.deficit,
      drainingDcs: Object.freeze(drainingDcs),
    });
  }

  /**
   * A fresh, frozen view of the scheduler this transfer is bound to now: the budget and every
   * transfer sharing it.
   */
  schedulerSnapshot(): MediaSchedulerSnapshot {
    return this.#current.owner.snapshot();
  }

  #bindTo(scheduler: BindingOwner): Binding {
    const binding = scheduler.bind(this.id, this.sizeClass, (removed) => {
      this.#retiredGrants += removed.grants;
      this.#retiredGrantedBytes += removed.grantedBytes;
      this.#bindings.delete(removed.owner);
    });
    this.#bindings.set(scheduler, binding);
    return binding;
  }

  #checkCharge(bytes: number): number {
    checkNumber("bytes", bytes, bytesRule);
    const charge = chargeOf(bytes);
    const budget = this.#context.registry.limits[this.direction].maxBytesInFlight;
    if (charge > budget) {
      throw new RangeError(
        `Expected \`bytes\` to be at most ${budget} (the ${this.direction} budget per data centre) once rounded up to ${mediaChargeUnitBytes}, got ${bytes} (charge ${charge})`,
      );
    }
    return charge;
  }

  #closedError(): MediaSchedulerError {
    return new MediaSchedulerError(
      "ERR_TRANSFER_CLOSED",
      `Media transfer ${this.id} is closed: ${this.#closeMessage}`,
    );
  }
}

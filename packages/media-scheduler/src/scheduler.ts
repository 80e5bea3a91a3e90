// One scheduler per (data centre, direction): a byte budget shared by deficit round robin between
// the transfers bound to it, foreground first with a guaranteed periodic background grant.

import { safeLog } from "@telepace/core";
import type { Binding, BindingOwner, Ring, Waiter } from "./binding.js";
import { mediaChargeUnitBytes } from "./charge.js";
import type { RegistryContext } from "./context.js";
import { publish } from "./events.js";
import type { MediaDc, MediaDirection, MediaSizeClass } from "./kinds.js";
import { LinkedQueue } from "./linked-queue.js";
import type { ResolvedLimits } from "./options.js";
import { MediaPermit } from "./permit.js";
import type { MediaSchedulerSnapshot, MediaSchedulerTransferSnapshot } from "./snapshot.js";

function newRing(priority: Ring["priority"]): Ring {
  return { priority, queue: new LinkedQueue<Binding>(), lastTurn: undefined };
}

/**
 * The byte budget of one (data centre, direction). Created lazily by the registry when a transfer
 * first binds to it and evicted once nothing is bound, queued or live there. Internal: users see
 * it only through snapshots; transfers reach it as the {@link BindingOwner} of their bindings and
 * permits through their release callback.
 *
 * How a grant is chosen (decided once per turn, in a microtask after acquire, release, abort,
 * close, rebind or configure; no timers):
 * 1. A transfer whose size class has no free active slot waits in a FIFO for one; it does not
 *    hold up anyone else.
 * 2. A large transfer whose next request would take large transfers past
 *    `maxLargeBytesInFlight` steps out of the rotation until large bytes come back, so small
 *    transfers are never held up behind it.
 * 3. Among the others, deficit round robin in two rotations: foreground, and background.
 *    The background rotation gets the next grant after `backgroundGrantInterval` foreground grants
 *    made while it had a request waiting, or whenever no foreground request waits.
 * 4. The request chosen next is never overtaken: if it does not fit the free bytes, the
 *    scheduler waits for releases, which reserves the capacity it needs.
 */
export class Scheduler implements BindingOwner {
  /** The data centre whose budget this is. */
  readonly dc: MediaDc;
  /** The direction whose budget this is. */
  readonly direction: MediaDirection;
  readonly #context: RegistryContext;
  readonly #onEmpty: () => void;
  readonly #bindings = new Set<Binding>();
  readonly #foreground = newRing("foreground");
  readonly #background = newRing("background");
  readonly #slotQueues: Record<MediaSizeClass, LinkedQueue<Binding>> = {
    small: new LinkedQueue<Binding>(),
    large: new LinkedQueue<Binding>(),
  };
  readonly #slotsInUse: Record<MediaSizeClass, number> = { small: 0, large: 0 };
  #slotLimits: Record<MediaSizeClass, number>;
  #maxBytes: number;
  #maxLargeBytes: number;
  #largeActiveBytes = 0;
  // Large transfers whose next request does not fit the large-class bytes, in arrival order.
  readonly #largeBytesQueue = new LinkedQueue<Binding>();
  #backgroundInterval: number;
  #activeBytes = 0;
  #queuedBytes = 0;
  #queuedRequests = 0;
  #quantum = mediaChargeUnitBytes;
  #foregroundSinceBackground = 0;
  #grants = 0;
  #grantedBytes = 0;
  #releases = 0;
  #isDispatching = false;
  #isScheduled = false;
  readonly #runScheduled = (): void => {
    this.#isScheduled = false;
    this.#dispatch();
  };

  /** `onEmpty` runs whenever the last binding is forgotten: the registry may evict it then. */
  constructor(
    dc: MediaDc,
    direction: MediaDirection,
    context: RegistryContext,
    onEmpty: () => void,
  ) {
    this.dc = dc;
    this.direction = direction;
    this.#context = context;
    this.#onEmpty = onEmpty;
    const limits = context.limits[direction];
    this.#maxBytes = limits.maxBytesInFlight;
    this.#maxLargeBytes = limits.maxLargeBytesInFlight;
    this.#slotLimits = {
      small: limits.maxActiveSmallTransfers,
      large: limits.maxActiveLargeTransfers,
    };
    this.#backgroundInterval = context.limits.backgroundGrantInterval;
  }

  /** The byte budget in force. */
  get maxBytesInFlight(): number {
    return this.#maxBytes;
  }

  /** Sum of the charges of live permits. */
  get activeBytes(): number {
    return this.#activeBytes;
  }

  /** Sum of the charges of waiting acquires. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** A fresh, frozen view of the scheduler and of every transfer bound to it. */
  snapshot(): MediaSchedulerSnapshot {
    const transfers: MediaSchedulerTransferSnapshot[] = [];
    let activeTransfers = 0;
    let queuedTransfers = 0;
    for (const binding of this.#bindings) {
      if (binding.livePermits > 0) activeTransfers++;
      if (binding.waiters.size > 0) queuedTransfers++;
      transfers.push(snapshotBinding(binding));
    }
    return Object.freeze({
      dc: this.dc,
      direction: this.direction,
      maxBytesInFlight: this.#maxBytes,
      maxLargeBytesInFlight: this.#maxLargeBytes,
      activeBytes: this.#activeBytes,
      largeActiveBytes: this.#largeActiveBytes,
      queuedBytes: this.#queuedBytes,
      queuedRequests: this.#queuedRequests,
      maxActiveSmallTransfers: this.#slotLimits.small,
      maxActiveLargeTransfers: this.#slotLimits.large,
      smallSlotsInUse: this.#slotsInUse.small,
      largeSlotsInUse: this.#slotsInUse.large,
      transfersWaitingForSlot: this.#slotQueues.small.size + this.#slotQueues.large.size,
      transfersWaitingForLargeBytes: this.#largeBytesQueue.size,
      activeTransfers,
      queuedTransfers,
      quantumBytes: this.#quantum,
      foregroundGrantsSinceBackground: this.#foregroundSinceBackground,
      grants: this.#grants,
      grantedBytes: this.#grantedBytes,
      releases: this.#releases,
      transfers: Object.freeze(transfers),
    });
  }

  bind(transferId: string, sizeClass: MediaSizeClass, onRemoved: Binding["onRemoved"]): Binding {
    const binding: Binding = {
      transferId,
      sizeClass,
      owner: this,
      onRemoved,
      waiters: new LinkedQueue<Waiter>(),
      queuedBytes: 0,
      livePermits: 0,
      liveBytes: 0,
      grants: 0,
      grantedBytes: 0,
      deficit: 0,
      isTurnOpen: false,
      ring: undefined,
      ringNode: undefined,
      slotNode: undefined,
      largeBytesNode: undefined,
      holdsSlot: false,
      isCurrent: true,
    };
    this.#bindings.add(binding);
    return binding;
  }

  enqueue(waiter: Waiter): void {
    this.#push(waiter);
    this.#schedule();
  }

  cancel(waiter: Waiter, reason: unknown): void {
    const binding = waiter.binding;
    const node = waiter.node;
    if (node === undefined) return;
    const wasHead = binding.waiters.peek() === waiter;
    this.#unqueue(binding, waiter, node);
    this.#afterRemoval(binding, wasHead);
    this.#context.counters.aborted++;
    waiter.reject(reason);
    this.#schedule();
  }

  close(binding: Binding, reason: unknown): void {
    const rejected = this.#drainWaiters(binding);
    this.#context.counters.rejectedClosed += rejected.length;
    for (const waiter of rejected) {
      waiter.unsubscribe();
      waiter.reject(reason);
    }
    this.#retire(binding);
    this.#schedule();
  }

  moveTo(binding: Binding, to: Binding): number {
    const moved = this.#drainWaiters(binding);
    this.#retire(binding);
    for (const waiter of moved) {
      waiter.binding = to;
      to.owner.enqueue(waiter);
    }
    this.#schedule();
    return moved.length;
  }

  /** Applies new limits (from `configure()`) to a running scheduler. */
  applyLimits(limits: ResolvedLimits): void {
    const own = limits[this.direction];
    this.#maxBytes = own.maxBytesInFlight;
    this.#maxLargeBytes = own.maxLargeBytesInFlight;
    this.#slotLimits = { small: own.maxActiveSmallTransfers, large: own.maxActiveLargeTransfers };
    this.#backgroundInterval = limits.backgroundGrantInterval;
    this.#rejectOverBudget();
    this.#readmitLarge();
    this.#admit("small");
    this.#admit("large");
    this.#schedule();
  }

  // The binding is no longer its transfer's current one: forget it once drained.
  #retire(binding: Binding): void {
    binding.isCurrent = false;
    this.#removeIfDone(binding);
  }

  // A permit's charge comes back (the permit calls this once, at its first release).
  #returnCharge(binding: Binding, permit: MediaPermit, grantedAt: number): void {
    const charge = permit.chargedBytes;
    this.#activeBytes -= charge;
    if (binding.sizeClass === "large") {
      this.#largeActiveBytes -= charge;
      this.#readmitLarge();
    }
    binding.livePermits--;
    binding.liveBytes -= charge;
    this.#releases++;
    this.#context.counters.releases++;
    publish("release", () => ({
      type: "release",
      dc: this.dc,
      direction: this.direction,
      transferId: binding.transferId,
      permitId: permit.id,
      chargedBytes: charge,
      heldMs: this.#context.clock.now() - grantedAt,
      activeBytes: this.#activeBytes,
    }));
    this.#freeSlotIfIdle(binding);
    this.#removeIfDone(binding);
    this.#schedule();
  }

  // A request that can never fit the shrunk budget would wait forever: reject it the way a fresh
  // acquire of that size is rejected.
  #rejectOverBudget(): void {
    if (this.#queuedRequests === 0) return;
    const rejected: Waiter[] = [];
    for (const binding of this.#bindings) {
      const head = binding.waiters.peek();
      let removed = 0;
      for (const waiter of [...binding.waiters]) {
        if (waiter.charge <= this.#maxBytes) continue;
        this.#unqueue(binding, waiter, waiter.node as NonNullable<Waiter["node"]>);
        rejected.push(waiter);
        removed++;
      }
      if (removed > 0) this.#afterRemoval(binding, head !== binding.waiters.peek());
    }
    if (rejected.length === 0) return;
    this.#context.counters.rejectedOverBudget += rejected.length;
    safeLog(
      this.#context.logger,
      "warn",
      { dc: this.dc, direction: this.direction, rejected: rejected.length },
      "waiting acquires rejected: their charge exceeds the reconfigured budget",
    );
    for (const waiter of rejected) {
      waiter.unsubscribe();
      waiter.reject(
        new RangeError(
          `Expected \`bytes\` to be at most ${this.#maxBytes} (the ${this.direction} budget per data centre, reconfigured) once rounded up to ${mediaChargeUnitBytes}, got ${waiter.bytes} (charge ${waiter.charge})`,
        ),
      );
    }
  }

  #push(waiter: Waiter): void {
    const binding = waiter.binding;
    const charge = waiter.charge;
    waiter.node = binding.waiters.push(waiter);
    binding.queuedBytes += charge;
    this.#queuedBytes += charge;
    this.#queuedRequests++;
    this.#context.queuedRequests++;
    // The quantum must cover the largest charge so every turn grants at least one request.
    if (charge > this.#quantum) this.#quantum = charge;
    if (binding.waiters.size === 1) this.#onBacklogged(binding);
  }

  #unqueue(binding: Binding, waiter: Waiter, node: NonNullable<Waiter["node"]>): void {
    binding.waiters.remove(node);
    waiter.node = undefined;
    binding.queuedBytes -= waiter.charge;
    this.#queuedBytes -= waiter.charge;
    this.#queuedRequests--;
    this.#context.queuedRequests--;
  }

  #drainWaiters(binding: Binding): Waiter[] {
    const drained: Waiter[] = [];
    for (let waiter = binding.waiters.peek(); waiter !== undefined; ) {
      this.#unqueue(binding, waiter, waiter.node as NonNullable<Waiter["node"]>);
      drained.push(waiter);
      waiter = binding.waiters.peek();
    }
    if (drained.length > 0) this.#onDrained(binding);
    return drained;
  }

  #afterRemoval(binding: Binding, wasHead: boolean): void {
    if (binding.waiters.size === 0) this.#onDrained(binding);
    else if (wasHead) this.#onHeadChanged(binding);
  }

  // A binding that just got its first waiting request enters the rotation when it already holds
  // a slot (it has live permits) or a slot of its class is free; otherwise it waits for one.
  #onBacklogged(binding: Binding): void {
    if (!binding.holdsSlot) {
      const sizeClass = binding.sizeClass;
      const hasFreeSlot =
        this.#slotsInUse[sizeClass] < this.#slotLimits[sizeClass] &&
        this.#slotQueues[sizeClass].size === 0;
      if (!hasFreeSlot) {
        binding.slotNode = this.#slotQueues[sizeClass].push(binding);
        return;
      }
      this.#slotsInUse[sizeClass]++;
      binding.holdsSlot = true;
    }
    this.#joinRing(binding);
  }

  #onDrained(binding: Binding): void {
    if (binding.ring !== undefined) this.#leaveRing(binding);
    if (binding.largeBytesNode !== undefined) {
      this.#largeBytesQueue.remove(binding.largeBytesNode);
      binding.largeBytesNode = undefined;
    }
    if (binding.slotNode !== undefined) {
      this.#slotQueues[binding.sizeClass].remove(binding.slotNode);
      binding.slotNode = undefined;
    }
    this.#freeSlotIfIdle(binding);
  }

  // The head request decides which rotation a transfer is in (a transfer can mix priorities).
  #onHeadChanged(binding: Binding): void {
    const ring = binding.ring;
    const head = binding.waiters.peek();
    if (ring === undefined || head === undefined || head.priority === ring.priority) return;
    this.#leaveRing(binding);
    this.#joinRing(binding);
  }

  #joinRing(binding: Binding): void {
    const head = binding.waiters.peek() as Waiter;
    const ring = head.priority === "foreground" ? this.#foreground : this.#background;
    binding.ring = ring;
    binding.ringNode = ring.queue.push(binding);
    binding.deficit = 0;
    binding.isTurnOpen = false;
  }

  #leaveRing(binding: Binding): void {
    const ring = binding.ring as Ring;
    // Leaving in the middle of its own turn counts as having had the turn.
    if (binding.isTurnOpen) ring.lastTurn = binding;
    ring.queue.remove(binding.ringNode as NonNullable<Binding["ringNode"]>);
    binding.ring = undefined;
    binding.ringNode = undefined;
    binding.deficit = 0;
    binding.isTurnOpen = false;
    if (ring === this.#background && ring.queue.size === 0) this.#foregroundSinceBackground = 0;
  }

  // Whether a large transfer's request must wait for large-class bytes. A request is never held
  // back while no large bytes are live, so one larger than the class cap still goes through.
  #isLargeCapped(binding: Binding, charge: number): boolean {
    return (
      binding.sizeClass === "large" &&
      this.#largeActiveBytes > 0 &&
      this.#largeActiveBytes + charge > this.#maxLargeBytes
    );
  }

  // Large-class bytes came back: the first waiting large transfer whose request now fits goes
  // back into its rotation (in arrival order, none overtaking another).
  #readmitLarge(): void {
    let room = this.#maxLargeBytes - this.#largeActiveBytes;
    for (;;) {
      const binding = this.#largeBytesQueue.peek();
      if (binding === undefined) return;
      const head = binding.waiters.peek() as Waiter;
      if (this.#largeActiveBytes > 0 && head.charge > room) return;
      room -= head.charge;
      this.#largeBytesQueue.shift();
      binding.largeBytesNode = undefined;
      this.#joinRing(binding);
    }
  }

  #freeSlotIfIdle(binding: Binding): void {
    if (!binding.holdsSlot || binding.livePermits > 0 || binding.waiters.size > 0) return;
    binding.holdsSlot = false;
    this.#slotsInUse[binding.sizeClass]--;
    this.#admit(binding.sizeClass);
  }

  #admit(sizeClass: MediaSizeClass): void {
    const queue = this.#slotQueues[sizeClass];
    while (queue.size > 0 && this.#slotsInUse[sizeClass] < this.#slotLimits[sizeClass]) {
      const binding = queue.shift() as Binding;
      binding.slotNode = undefined;
      binding.holdsSlot = true;
      this.#slotsInUse[sizeClass]++;
      this.#joinRing(binding);
    }
  }

  #removeIfDone(binding: Binding): void {
    if (binding.isCurrent || binding.livePermits > 0 || binding.waiters.size > 0) return;
    if (!this.#bindings.delete(binding)) return;
    for (const ring of [this.#foreground, this.#background]) {
      if (ring.lastTurn === binding) ring.lastTurn = undefined;
    }
    binding.onRemoved(binding);
    if (this.#bindings.size === 0) this.#onEmpty();
  }

  #nextRing(): Ring | undefined {
    const hasForeground = this.#foreground.queue.size > 0;
    const hasBackground = this.#background.queue.size > 0;
    if (!hasBackground) return hasForeground ? this.#foreground : undefined;
    if (!hasForeground) return this.#background;
    return this.#foregroundSinceBackground >= this.#backgroundInterval
      ? this.#background
      : this.#foreground;
  }

  // Grant decisions are coalesced: every change (acquire, release, abort, close, rebind,
  // configure) asks for one dispatch in a microtask, so acquires made in the same turn compete in
  // the round robin instead of the first one taking the whole idle budget.
  #schedule(): void {
    if (this.#isScheduled) return;
    this.#isScheduled = true;
    queueMicrotask(this.#runScheduled);
  }

  // Grants until the next request in line does not fit. Re-entrant calls (a diagnostics
  // subscriber releasing a permit) return at once: the running loop sees their effect.
  #dispatch(): void {
    // Once the registry closes nothing is granted, not even between two transfers' closes.
    if (this.#isDispatching || this.#context.isClosed) return;
    this.#isDispatching = true;
    try {
      for (;;) {
        const ring = this.#nextRing();
        if (ring === undefined) return;
        const binding = ring.queue.peek() as Binding;
        const head = binding.waiters.peek() as Waiter;
        if (this.#isLargeCapped(binding, head.charge)) {
          // Large transfers hold all the bytes their class may: this one steps out of the
          // rotation until large bytes come back, so small transfers are not held up behind it.
          this.#leaveRing(binding);
          binding.largeBytesNode = this.#largeBytesQueue.push(binding);
          continue;
        }
        if (!binding.isTurnOpen) {
          // A transfer that just had its turn (and drained and came back) goes behind the others.
          if (binding === ring.lastTurn && ring.queue.size > 1) {
            ring.queue.rotate();
            continue;
          }
          // The turn starts only when its first grant can be made, so waiting for capacity
          // decides nothing: whoever is next when bytes free up gets them.
          if (head.charge > this.#maxBytes - this.#activeBytes) return;
          binding.deficit += this.#quantum;
          binding.isTurnOpen = true;
        }
        if (head.charge > binding.deficit) {
          binding.isTurnOpen = false;
          ring.lastTurn = binding;
          ring.queue.rotate();
          continue;
        }
        if (head.charge > this.#maxBytes - this.#activeBytes) return;
        this.#grant(ring, binding, head);
      }
    } finally {
      this.#isDispatching = false;
    }
  }

  #grant(ring: Ring, binding: Binding, waiter: Waiter): void {
    const charge = waiter.charge;
    this.#unqueue(binding, waiter, waiter.node as NonNullable<Waiter["node"]>);
    binding.deficit -= charge;
    binding.livePermits++;
    binding.liveBytes += charge;
    binding.grants++;
    binding.grantedBytes += charge;
    this.#activeBytes += charge;
    if (binding.sizeClass === "large") this.#largeActiveBytes += charge;
    this.#grants++;
    this.#grantedBytes += charge;
    this.#context.counters.grants++;
    if (ring === this.#background) this.#foregroundSinceBackground = 0;
    else if (this.#background.queue.size > 0) this.#foregroundSinceBackground++;
    waiter.unsubscribe();
    const now = this.#context.clock.now();
    const permit = new MediaPermit(
      ++this.#context.lastPermitId,
      binding.transferId,
      this.dc,
      this.direction,
      waiter.priority,
      waiter.bytes,
      charge,
      (released) => this.#returnCharge(binding, released, now),
    );
    this.#afterRemoval(binding, true);
    publish("grant", () => ({
      type: "grant",
      dc: this.dc,
      direction: this.direction,
      transferId: binding.transferId,
      permitId: permit.id,
      priority: waiter.priority,
      bytes: waiter.bytes,
      chargedBytes: charge,
      waitedMs: now - waiter.queuedAt,
      activeBytes: this.#activeBytes,
      maxBytesInFlight: this.#maxBytes,
    }));
    waiter.resolve(permit);
  }
}

function snapshotBinding(binding: Binding): MediaSchedulerTransferSnapshot {
  const head = binding.waiters.peek();
  let state: MediaSchedulerTransferSnapshot["state"];
  if (head !== undefined) state = binding.slotNode === undefined ? "queued" : "waiting-for-slot";
  else state = binding.livePermits > 0 ? "active" : "idle";
  return Object.freeze({
    transferId: binding.transferId,
    sizeClass: binding.sizeClass,
    state,
    isCurrent: binding.isCurrent,
    headPriority: head?.priority,
    queuedRequests: binding.waiters.size,
    queuedBytes: binding.queuedBytes,
    livePermits: binding.livePermits,
    activeBytes: binding.liveBytes,
    grants: binding.grants,
    grantedBytes: binding.grantedBytes,
    deficitBytes: binding.deficit,
  });
}

// A binding is one transfer's state at one scheduler: its FIFO of waiting acquires, its live
// permits, its deficit and its place in the round robin. A transfer has one current binding and,
// after a rebind, older ones that drain. The transfer sees its schedulers only as owners of its
// bindings, through the narrow interface below.

import type { MediaDc, MediaDirection, MediaPriority, MediaSizeClass } from "./kinds.js";
import type { LinkedQueue, QueueNode } from "./linked-queue.js";
import type { MediaPermit } from "./permit.js";
import type { MediaSchedulerSnapshot } from "./snapshot.js";

/** A waiting acquire. @internal */
export interface Waiter {
  readonly bytes: number;
  readonly charge: number;
  readonly priority: MediaPriority;
  /** Clock time of the acquire, kept across a rebind. */
  readonly queuedAt: number;
  readonly resolve: (permit: MediaPermit) => void;
  readonly reject: (reason: unknown) => void;
  /** Detaches the abort listener; called exactly when the waiter leaves the queue. */
  unsubscribe: () => void;
  /** Where the waiter currently waits (changes on rebind, so an abort finds it). */
  binding: Binding;
  /** Its node in `binding.waiters` while it waits. */
  node: QueueNode<Waiter> | undefined;
}

/**
 * What a transfer may ask of the scheduler that owns one of its bindings — and nothing else: the
 * scheduler's grant machinery stays private to it. @internal
 */
export interface BindingOwner {
  readonly dc: MediaDc;
  readonly direction: MediaDirection;
  /** Registers a transfer here; `onRemoved` runs once when the binding is forgotten. */
  bind(
    transferId: string,
    sizeClass: MediaSizeClass,
    onRemoved: (binding: Binding) => void,
  ): Binding;
  /** Queues `waiter` at `waiter.binding`, a binding of this owner. */
  enqueue(waiter: Waiter): void;
  /** Removes a waiting acquire (its signal aborted) and rejects it with `reason`. */
  cancel(waiter: Waiter, reason: unknown): void;
  /**
   * The transfer closed: rejects the binding's waiting acquires with `reason`; the binding is
   * forgotten once its live permits drain.
   */
  close(binding: Binding, reason: unknown): void;
  /**
   * The transfer rebound to `to` (a binding of another owner): its waiting acquires move there
   * in order and this binding drains. Returns how many moved.
   */
  moveTo(binding: Binding, to: Binding): number;
  /** A fresh, frozen view of the scheduler. */
  snapshot(): MediaSchedulerSnapshot;
}

/** One of the two grant rotations (foreground, background) of a scheduler. @internal */
export interface Ring {
  readonly priority: MediaPriority;
  readonly queue: LinkedQueue<Binding>;
  /** The binding whose turn ended last; it may not start two turns in a row while others wait. */
  lastTurn: Binding | undefined;
}

/** A transfer's state at one scheduler. @internal */
export interface Binding {
  readonly transferId: string;
  readonly sizeClass: MediaSizeClass;
  readonly owner: BindingOwner;
  /** Called once when the scheduler forgets the binding (drained and no longer current). */
  readonly onRemoved: (binding: Binding) => void;
  readonly waiters: LinkedQueue<Waiter>;
  queuedBytes: number;
  livePermits: number;
  liveBytes: number;
  grants: number;
  grantedBytes: number;
  /** Deficit round robin credit in bytes; reset to 0 whenever the queue empties. */
  deficit: number;
  /** Whether the quantum was added for the turn in progress. */
  isTurnOpen: boolean;
  ring: Ring | undefined;
  ringNode: QueueNode<Binding> | undefined;
  /** Its node in the scheduler's slot queue while it waits for a size-class slot. */
  slotNode: QueueNode<Binding> | undefined;
  /** Its node in the scheduler's queue of large transfers waiting for large-class bytes. */
  largeBytesNode: QueueNode<Binding> | undefined;
  /** Whether it counts against its size class's active-transfer cap. */
  holdsSlot: boolean;
  /** False once the transfer rebinds elsewhere or closes: the binding only drains. */
  isCurrent: boolean;
}

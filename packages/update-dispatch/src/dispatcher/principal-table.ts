// The principal table: each active principal with its FIFO of accepted updates and the calls
// waiting for room in it, and the principals waiting to become active, first come, first served.

import type { PrincipalId } from "./dispatch-key.js";
import type { Entry, Waiter, WaiterGroup } from "./entry.js";
import type { ProcessorRun } from "./processor-run.js";

/** An active principal: accepted updates not yet started, its running update, and waiters. */
export interface Principal {
  /** Set when it becomes active (a retired principal's record is used again). */
  id: PrincipalId;
  /** Accepted, not started, oldest first. */
  readonly queue: Entry[];
  /**
   * Non-empty only while the queue is full, so a waiter is never overtaken by a later call;
   * created on the first wait (most principals never have one).
   */
  waiters: WaiterGroup | undefined;
  /** The processor call running for this principal; at most one. */
  run: ProcessorRun<Principal> | undefined;
}

/** Records of retired principals kept for the next ones, at most (their queues are empty). */
const SPARE_RECORDS = 1024;

/** Active principals and the principals waiting to become active. */
export class PrincipalTable {
  readonly #active = new Map<PrincipalId, Principal>();
  // Most principals of a busy bot hold one update at a time, so one becomes active and retires
  // per update: their records (and queue arrays) are used again instead of made anew.
  readonly #spare: Principal[] = [];
  // Insertion-ordered: the first entry is the principal that has waited longest to be admitted.
  readonly #admissions = new Map<PrincipalId, WaiterGroup>();
  readonly #maxQueued: number;

  /** @param maxQueued - `maxQueuedPerPrincipal`. */
  constructor(maxQueued: number) {
    this.#maxQueued = maxQueued;
  }

  /** How many principals are active. */
  get size(): number {
    return this.#active.size;
  }

  get(id: PrincipalId): Principal | undefined {
    return this.#active.get(id);
  }

  /** The calls waiting for principal `id` to be admitted, if any. */
  admission(id: PrincipalId): WaiterGroup | undefined {
    return this.#admissions.get(id);
  }

  /** The waiter group of an active principal, created when it has none yet. */
  waitersOf(principal: Principal): WaiterGroup {
    principal.waiters ??= new Set();
    return principal.waiters;
  }

  /** The waiter group of an inactive principal, created when it has none yet. */
  admissionFor(id: PrincipalId): WaiterGroup {
    let group = this.#admissions.get(id);
    if (group === undefined) {
      group = new Set();
      this.#admissions.set(id, group);
    }
    return group;
  }

  /**
   * Whether the principal's queue takes one more update. The update next in line for a slot does
   * not count, as in a classic per-key dispatcher, whose worker takes it off the queue before
   * waiting for a slot: a principal holds at most `maxQueued` waiting updates plus the running or
   * next one.
   */
  hasRoom(principal: Principal): boolean {
    return principal.queue.length < this.#maxQueued + (principal.run === undefined ? 1 : 0);
  }

  activate(id: PrincipalId, waiters?: WaiterGroup): Principal {
    let principal = this.#spare.pop();
    if (principal === undefined) {
      principal = { id, queue: [], waiters, run: undefined };
    } else {
      principal.id = id;
      principal.waiters = waiters;
    }
    this.#active.set(id, principal);
    return principal;
  }

  /**
   * Removes a principal that has nothing queued or running, and activates the principal that has
   * waited longest for admission, handing it its waiters; returns that one.
   */
  retire(principal: Principal): Principal | undefined {
    this.#active.delete(principal.id);
    if (this.#spare.length < SPARE_RECORDS) {
      // Nothing refers to a retired record: runs that outlive their principal (abandoned at a
      // timeout) no longer report to it.
      principal.waiters = undefined;
      principal.run = undefined;
      this.#spare.push(principal);
    }
    if (this.#admissions.size === 0) return undefined;
    const oldest = this.#admissions.entries().next();
    if (oldest.done === true) return undefined;
    const [id, waiters] = oldest.value;
    this.#admissions.delete(id);
    return this.activate(id, waiters);
  }

  /** Removes a waiter wherever it waits; false when it is no longer waiting. */
  withdraw(waiter: Waiter): boolean {
    const { keyId } = waiter.entry;
    const principal = this.#active.get(keyId);
    const group = principal?.waiters ?? this.#admissions.get(keyId);
    if (group === undefined || !group.delete(waiter)) return false;
    if (principal === undefined && group.size === 0) this.#admissions.delete(keyId);
    return true;
  }

  /** Every waiting call, in call order per principal, removed from the table. */
  takeWaiters(): Waiter[] {
    const waiters: Waiter[] = [];
    for (const principal of this.#active.values()) {
      if (principal.waiters === undefined) continue;
      waiters.push(...principal.waiters);
      principal.waiters.clear();
    }
    for (const group of this.#admissions.values()) waiters.push(...group);
    this.#admissions.clear();
    return waiters;
  }

  /** Every active principal, removed from the table (close hands their work back). */
  takeAll(): Principal[] {
    const principals = [...this.#active.values()];
    this.#active.clear();
    return principals;
  }
}

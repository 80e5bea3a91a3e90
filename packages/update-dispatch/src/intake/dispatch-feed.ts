// The intake's hand-over to the dispatcher: stored updates go to it in the journal's order while
// memory and their principal's queue take them; the rest wait in the journal, by id and per
// principal, and are read back in order as room comes. One busy principal therefore holds at most
// its queue's worth of memory, and never holds back anybody else's updates.

import type { Update } from "@grammyjs/types";
import { BinaryHeap } from "@telepace/core";
import { type DispatchKey, dispatchKeyOf, type PrincipalId } from "../dispatcher/dispatch-key.js";
import type { DispatcherAccess } from "../dispatcher/dispatcher-access.js";
import type { EnqueueResult } from "../dispatcher/results.js";

/** The part of the journal the feed reads from, and what it tells the store. */
export interface FeedJournal {
  /** Reads stored, unfinished updates by id (the journal's `read`). */
  read(updateIds: readonly number[]): Promise<readonly Update[]>;
  /** A read failed: the ids go back in line and are read again after `retryInMs`. */
  readFailed(error: unknown): void;
  /** The journal no longer holds these ids unfinished (they cannot be processed). */
  missing(updateIds: readonly number[]): void;
  /** Runs `retry` after a delay (the intake's clock). */
  later(retry: () => void, delayMs: number): void;
}

/** How long a failed read waits before it is tried again, at first and at most (ms). */
const READ_RETRY_MS = 500;
const READ_RETRY_MAX_MS = 30_000;
/** A read back takes at least this many updates when as many wait (fewer reads, not fewer updates). */
const MEMORY_REFILL = 64;

/** One principal's updates that wait in the journal only, oldest first. */
interface Backlog {
  readonly key: DispatchKey;
  ids: number[];
  head: number;
  /** Updates of it being read back now. */
  reading: number;
  /** Whether it is in the read-back queue (it has room for a read). */
  isQueued: boolean;
  /** Whether it waits for any update to finish: no more calls may wait to become active. */
  isBlocked: boolean;
}

const waitingIn = (backlog: Backlog): number => backlog.ids.length - backlog.head;

/**
 * Hands stored updates to the dispatcher, one at a time in the order given, without a promise
 * each: an update goes in when fewer than `maxInMemory` are in memory (handed over, not finished)
 * and its principal takes it without waiting (`full` otherwise: the dispatcher's per-principal
 * queue is the window). Otherwise only its id is kept, in its principal's backlog, and every later
 * update of that principal joins the backlog behind it, so per-principal order is the journal's.
 * As updates finish, backlogs are read back from the journal — the principal whose oldest waiting
 * update is the oldest first, in reads of at least 64 updates (or half a principal's queue) — and
 * handed over in order.
 */
export class DispatchFeed {
  readonly #access: DispatcherAccess;
  readonly #journal: FeedJournal;
  readonly #maxInMemory: number;
  readonly #memoryRefill: number;
  readonly #principalRefill: number;
  readonly #backlogs = new Map<PrincipalId, Backlog>();
  // Backlogs refused `waiting-full`: tried again once anything finishes (a principal retires).
  #blocked: Backlog[] = [];
  // Backlogs that have room for a read, oldest waiting update first (ids grow with arrival).
  readonly #ready = new BinaryHeap<Backlog>(
    (a, b) => (a.ids[a.head] as number) - (b.ids[b.head] as number),
  );
  #inMemory = 0;
  #waiting = 0;
  #readBack = 0;
  #isReading = false;
  // After a failed read nothing is read until its retry time, whatever finishes meanwhile.
  #isWaitingToRetry = false;
  #isRefillScheduled = false;
  #retryMs = READ_RETRY_MS;
  #isStopped = false;
  readonly #refillTask = (): void => {
    this.#isRefillScheduled = false;
    this.#refill();
  };

  /**
   * @param access - the intake's access to its dispatcher.
   * @param journal - where backlogs are read back from.
   * @param maxInMemory - `maxUnfinished`: updates handed over and not finished, at most.
   * @param capacity - what one principal takes (`maxQueuedPerPrincipal` + 1).
   */
  constructor(
    access: DispatcherAccess,
    journal: FeedJournal,
    maxInMemory: number,
    capacity: number,
  ) {
    this.#access = access;
    this.#journal = journal;
    this.#maxInMemory = maxInMemory;
    this.#memoryRefill = Math.max(1, Math.min(MEMORY_REFILL, Math.floor(maxInMemory / 8)));
    this.#principalRefill = Math.max(1, Math.floor(capacity / 2));
  }

  /** Updates handed to the dispatcher (or being read back for it) and not finished. */
  get inMemory(): number {
    return this.#inMemory;
  }

  /** Updates that wait in the journal only, for their principal's turn or for memory. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Updates read back from the journal, ever. */
  get readBack(): number {
    return this.#readBack;
  }

  /** Takes stored updates, in the journal's order. */
  push(updates: readonly Update[]): void {
    // Indexed: once per batch, often not yet optimised, where `for of` allocates per update.
    for (let index = 0; index < updates.length; index++) {
      const update = updates[index] as Update;
      if (this.#isStopped) return;
      const key = dispatchKeyOf(update);
      const backlog = this.#backlogs.size === 0 ? undefined : this.#backlogs.get(key.id);
      if (backlog !== undefined) {
        this.#keep(backlog, update.update_id);
      } else if (this.#inMemory >= this.#maxInMemory) {
        this.#keep(this.#backlogFor(key), update.update_id);
      } else {
        const refused = this.#give(update, key);
        if (refused !== undefined) this.#keep(this.#backlogFor(key), update.update_id, refused);
      }
    }
    this.#scheduleRefill();
  }

  /** The dispatcher finished an update of principal `keyId`: room for more. */
  ended(keyId: PrincipalId): void {
    this.#inMemory--;
    if (this.#backlogs.size === 0) return;
    const backlog = this.#backlogs.get(keyId);
    if (backlog !== undefined) this.#queueIfRoom(backlog);
    if (this.#blocked.length > 0) {
      const blocked = this.#blocked;
      this.#blocked = [];
      for (const other of blocked) {
        other.isBlocked = false;
        this.#queueIfRoom(other);
      }
    }
    this.#scheduleRefill();
  }

  /** Stops handing over; what was not handed over stays in the journal for the next start. */
  stop(): void {
    this.#isStopped = true;
    this.#backlogs.clear();
    this.#ready.clear();
    this.#blocked = [];
    this.#waiting = 0;
  }

  /**
   * Hands one update to the dispatcher. `undefined` when it took it (or needs not: a duplicate
   * ends with the one queued first; `closed` leaves it to the journal); otherwise why it took
   * nothing: `full` (its principal's queue) or `waiting-full` (no more may wait to become active).
   */
  #give(update: Update, key: DispatchKey): "full" | "waiting-full" | undefined {
    const outcome = this.#access.handOver(update, key);
    if (outcome === "accepted") {
      this.#inMemory++;
    } else if (typeof outcome === "object") {
      this.#inMemory++;
      void outcome.then((result) => this.#admitted(result));
    } else if (outcome === "full" || outcome === "waiting-full") {
      return outcome;
    }
    return undefined;
  }

  /** A hand-over that waited for its principal to become active settled. */
  #admitted(result: EnqueueResult): void {
    // `closed` leaves it to the journal; a duplicate's end comes from the one queued first.
    if (result.status !== "accepted") this.#inMemory--;
  }

  #backlogFor(key: DispatchKey): Backlog {
    const backlog: Backlog = {
      key,
      ids: [],
      head: 0,
      reading: 0,
      isQueued: false,
      isBlocked: false,
    };
    this.#backlogs.set(key.id, backlog);
    return backlog;
  }

  /** Keeps an id in a backlog, behind the ones there; `refused` says why it was not taken. */
  #keep(backlog: Backlog, id: number, refused?: "full" | "waiting-full"): void {
    backlog.ids.push(id);
    this.#waiting++;
    if (refused === "waiting-full") this.#block(backlog);
    else this.#queueIfRoom(backlog);
  }

  #block(backlog: Backlog): void {
    if (backlog.isBlocked || backlog.isQueued) return;
    backlog.isBlocked = true;
    this.#blocked.push(backlog);
  }

  /** Queues a backlog for reading once its principal takes enough of it. */
  #queueIfRoom(backlog: Backlog): void {
    if (backlog.isQueued || backlog.isBlocked) return;
    const waiting = waitingIn(backlog);
    if (waiting === 0) return;
    const room = this.#access.roomFor(backlog.key.id) - backlog.reading;
    if (room < Math.min(waiting, this.#principalRefill)) return;
    backlog.isQueued = true;
    this.#ready.push(backlog);
  }

  #scheduleRefill(): void {
    if (this.#isRefillScheduled || this.#isReading || this.#isWaitingToRetry) return;
    if (this.#ready.size === 0) return;
    this.#isRefillScheduled = true;
    queueMicrotask(this.#refillTask);
  }

  /** Reads back what memory takes now, from the backlogs in the read-back queue, in one read. */
  #refill(): void {
    if (this.#isStopped || this.#isReading) return;
    let room = this.#maxInMemory - this.#inMemory;
    if (room < Math.min(this.#waiting, this.#memoryRefill)) return;
    const ids: number[] = [];
    const taken: { readonly backlog: Backlog; readonly count: number }[] = [];
    while (room > 0) {
      const backlog = this.#ready.pop();
      if (backlog === undefined) break;
      backlog.isQueued = false;
      const free = this.#access.roomFor(backlog.key.id) - backlog.reading;
      const count = Math.min(free, room, waitingIn(backlog));
      if (count <= 0) continue;
      for (let index = 0; index < count; index++) ids.push(backlog.ids[backlog.head++] as number);
      backlog.reading += count;
      room -= count;
      taken.push({ backlog, count });
    }
    if (ids.length === 0) return;
    // Reserved now: memory is counted from the read on, so new arrivals do not take it.
    this.#inMemory += ids.length;
    this.#waiting -= ids.length;
    this.#isReading = true;
    let reading: Promise<readonly Update[]>;
    try {
      reading = this.#journal.read(ids);
    } catch (error) {
      reading = Promise.reject(error);
    }
    reading.then(
      (updates) => this.#readDone(ids, taken, updates),
      (error: unknown) => this.#readFailed(ids, taken, error),
    );
  }

  #readDone(
    ids: readonly number[],
    taken: readonly { readonly backlog: Backlog; readonly count: number }[],
    updates: readonly Update[],
  ): void {
    this.#isReading = false;
    this.#retryMs = READ_RETRY_MS;
    if (this.#isStopped) return;
    const missing: number[] = [];
    let next = 0;
    let position = 0;
    for (const { backlog, count } of taken) {
      backlog.reading -= count;
      const refused: number[] = [];
      for (let index = 0; index < count; index++) {
        const id = ids[position++] as number;
        const update = updates[next];
        this.#inMemory--; // counted again by #give when the dispatcher takes it
        if (update?.update_id !== id) {
          missing.push(id);
          continue;
        }
        next++;
        this.#readBack++;
        // Room was counted for it when the read began and its principal's later updates joined
        // the backlog meanwhile, so the dispatcher takes it; should it not, it waits again, and
        // so does every later one of this backlog, in order.
        if (refused.length > 0) refused.push(id);
        else if (this.#give(update, backlog.key) !== undefined) refused.push(id);
      }
      if (refused.length > 0) {
        this.#putBack(backlog, refused);
        this.#block(backlog);
      } else {
        this.#settleBacklog(backlog);
      }
    }
    if (missing.length > 0) this.#journal.missing(missing);
    this.#scheduleRefill();
  }

  #readFailed(
    ids: readonly number[],
    taken: readonly { readonly backlog: Backlog; readonly count: number }[],
    error: unknown,
  ): void {
    this.#isReading = false;
    this.#inMemory -= ids.length;
    if (this.#isStopped) return;
    this.#journal.readFailed(error);
    let position = 0;
    for (const { backlog, count } of taken) {
      backlog.reading -= count;
      this.#putBack(backlog, ids.slice(position, position + count));
      position += count;
    }
    const delayMs = this.#retryMs;
    this.#retryMs = Math.min(READ_RETRY_MAX_MS, delayMs * 2);
    this.#isWaitingToRetry = true;
    for (const { backlog } of taken) this.#settleBacklog(backlog);
    this.#journal.later(() => {
      this.#isWaitingToRetry = false;
      this.#scheduleRefill();
    }, delayMs);
  }

  /** Puts ids back at the front of a backlog, in their order. */
  #putBack(backlog: Backlog, ids: readonly number[]): void {
    backlog.ids = [...ids, ...backlog.ids.slice(backlog.head)];
    backlog.head = 0;
    this.#waiting += ids.length;
  }

  /** After a read: a backlog that is empty is gone; one with room goes back in the queue. */
  #settleBacklog(backlog: Backlog): void {
    if (waitingIn(backlog) === 0) {
      if (backlog.reading === 0 && this.#backlogs.get(backlog.key.id) === backlog) {
        this.#backlogs.delete(backlog.key.id);
      }
      backlog.ids = [];
      backlog.head = 0;
      return;
    }
    if (backlog.head > 1024 && backlog.head * 2 > backlog.ids.length) {
      backlog.ids = backlog.ids.slice(backlog.head);
      backlog.head = 0;
    }
    this.#queueIfRoom(backlog);
  }
}

// The ops waiting in the outbox: one lane per chat (or per chat-less key), each op found by its
// lane and identity, and how many wait in all (what `maxPending` bounds).

import { createLane, type Entry, type Lane, laneIdOf } from "./lane.js";
import type { ChatPacing } from "./outbox-options.js";

/** The lanes with work, and the pending entries in them. */
export class PendingOps {
  readonly #lanes = new Map<string | symbol, Lane>();
  readonly #pacingOf: (chatKey: string | undefined) => ChatPacing;
  #size = 0;

  /** `pacingOf` gives a new lane its chat's pacing. */
  constructor(pacingOf: (chatKey: string | undefined) => ChatPacing) {
    this.#pacingOf = pacingOf;
  }

  /** Entries waiting, over every lane (in-flight ones not counted). */
  get size(): number {
    return this.#size;
  }

  /** The lanes with work. */
  lanes(): IterableIterator<Lane> {
    return this.#lanes.values();
  }

  /** The lane an op of this chat and identity goes to, when it has work. */
  laneOf(chatKey: string | undefined, identity: string | symbol): Lane | undefined {
    return this.#lanes.get(laneIdOf(chatKey, identity));
  }

  /** The pending entry of this chat and identity. */
  find(chatKey: string | undefined, identity: string | symbol): Entry | undefined {
    return this.laneOf(chatKey, identity)?.byIdentity.get(identity);
  }

  /** The lane an op of this chat and identity goes to, opened when it has none. */
  open(chatKey: string | undefined, identity: string | symbol): Lane {
    const id = laneIdOf(chatKey, identity);
    let lane = this.#lanes.get(id);
    if (lane === undefined) {
      lane = createLane(id, chatKey, this.#pacingOf(chatKey));
      this.#lanes.set(id, lane);
    }
    return lane;
  }

  /** Puts the entry in its place in its lane (a new op, or a retried one keeping its place). */
  add(entry: Entry): void {
    entry.state = "pending";
    entry.lane.pending.push(entry);
    entry.lane.byIdentity.set(entry.identity, entry);
    this.#size++;
  }

  /** Moves a pending entry to the place its new priority gives it (a coalesced op). */
  reprioritize(entry: Entry, priority: number): void {
    entry.lane.pending.remove(entry);
    entry.priority = priority;
    entry.lane.pending.push(entry);
  }

  /** Takes a pending entry out of its lane. */
  remove(entry: Entry): void {
    entry.lane.pending.remove(entry);
    entry.lane.byIdentity.delete(entry.identity);
    this.#size--;
  }

  /** Takes the lane's head out to start it. */
  shift(lane: Lane): Entry {
    const entry = lane.pending.pop() as Entry;
    lane.byIdentity.delete(entry.identity);
    this.#size--;
    return entry;
  }

  /** Forgets the lane when it has nothing pending, in flight or being asked for. */
  forgetIfIdle(lane: Lane): void {
    // The identity check matters: a lane forgotten earlier may have a successor under its id.
    const idle = lane.pending.size === 0 && lane.inFlight === undefined && !lane.acquiring;
    if (idle && this.#lanes.get(lane.id) === lane) this.#lanes.delete(lane.id);
  }
}

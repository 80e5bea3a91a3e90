// The ready queue: principals that have an update queued and none running, ordered by the enqueue
// order of that oldest waiting update, so a free processor slot always takes the oldest work.

import { BinaryHeap } from "@telepace/core";
import type { Entry } from "./entry.js";
import type { Principal } from "./principal-table.js";

// A principal's head does not change while it is ready: only starting it (after it left this
// queue) or close (which clears this queue) takes it off.
function headSeq(principal: Principal): number {
  return (principal.queue[0] as Entry).seq;
}

/** A min-heap of ready principals by the sequence number of their head update. */
export class ReadyQueue {
  readonly #heap = new BinaryHeap<Principal>((a, b) => headSeq(a) - headSeq(b));

  /** Principals waiting for a processor slot. */
  get size(): number {
    return this.#heap.size;
  }

  /** Adds a principal that has an update queued and none running. */
  push(principal: Principal): void {
    this.#heap.push(principal);
  }

  /** Takes the principal whose head update was enqueued first. */
  pop(): Principal | undefined {
    return this.#heap.pop();
  }

  clear(): void {
    this.#heap.clear();
  }
}

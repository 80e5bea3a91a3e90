// The ready queue: principals that have an update queued and none running, ordered by the enqueue
// order of that oldest waiting update, so a free processor slot always takes the oldest work.

import type { Entry } from "./entry.js";
import type { Principal } from "./principal-table.js";

/**
 * A min-heap of ready principals by the sequence number of their head update. Every update passes
 * through it once, so it keeps the keys in an array of their own beside the principals and
 * compares numbers inline: no comparator call and no pointer chase per comparison. A principal's
 * head does not change while it is ready (only starting it, after it left this queue, or close,
 * which clears the queue, takes it off), so its key is read once, on push.
 */
export class ReadyQueue {
  readonly #keys: number[] = [];
  readonly #principals: Principal[] = [];

  /** Adds a principal that has an update queued and none running. */
  push(principal: Principal): void {
    const keys = this.#keys;
    const principals = this.#principals;
    const key = (principal.queue[0] as Entry).seq;
    let index = keys.length;
    keys.push(key);
    principals.push(principal);
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const parentKey = keys[parent] as number;
      if (parentKey <= key) break;
      keys[index] = parentKey;
      principals[index] = principals[parent] as Principal;
      index = parent;
    }
    keys[index] = key;
    principals[index] = principal;
  }

  /** Takes the principal whose head update was enqueued first. */
  pop(): Principal | undefined {
    const keys = this.#keys;
    const principals = this.#principals;
    const size = keys.length;
    if (size === 0) return undefined;
    const top = principals[0] as Principal;
    const lastKey = keys.pop() as number;
    const last = principals.pop() as Principal;
    const count = size - 1;
    if (count === 0) return top;
    let index = 0;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= count) break;
      let childKey = keys[child] as number;
      const right = child + 1;
      if (right < count) {
        const rightKey = keys[right] as number;
        if (rightKey < childKey) {
          child = right;
          childKey = rightKey;
        }
      }
      if (lastKey <= childKey) break;
      keys[index] = childKey;
      principals[index] = principals[child] as Principal;
      index = child;
    }
    keys[index] = lastKey;
    principals[index] = last;
    return top;
  }

  clear(): void {
    this.#keys.length = 0;
    this.#principals.length = 0;
  }
}

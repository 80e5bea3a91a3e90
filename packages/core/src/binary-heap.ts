// A binary min-heap ordered by a comparator: the priority queue under every scheduler.

/** Returns < 0 when `a` must come out before `b`, > 0 when after, 0 when either may. */
export type Comparator<T> = (a: T, b: T) => number;

/**
 * A binary min-heap: `pop()` returns the smallest element by the comparator. Push and pop are
 * O(log n); `remove` is O(n). Equal elements come out in no particular order, so put a sequence
 * number in the comparator when ties must be FIFO.
 *
 * @example
 * const heap = new BinaryHeap<number>((a, b) => a - b);
 * heap.push(3); heap.push(1);
 * heap.pop(); // 1
 */
export class BinaryHeap<T> {
  readonly #items: T[] = [];
  readonly #compare: Comparator<T>;

  constructor(compare: Comparator<T>) {
    if (typeof compare !== "function") {
      throw new TypeError(`Expected \`compare\` to be a function, got ${typeof compare}`);
    }
    this.#compare = compare;
  }

  /** Number of elements. */
  get size(): number {
    return this.#items.length;
  }

  /** Adds an element. */
  push(item: T): void {
    this.#items.push(item);
    this.#up(this.#items.length - 1);
  }

  /** The smallest element without removing it, or `undefined` when empty. */
  peek(): T | undefined {
    return this.#items[0];
  }

  /** Removes and returns the smallest element, or `undefined` when empty. */
  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      this.#down(0);
    }
    return top;
  }

  /** Removes one element identical (`===`) to `item`; returns whether it was present. */
  remove(item: T): boolean {
    const items = this.#items;
    const index = items.indexOf(item);
    if (index < 0) return false;
    const last = items.pop() as T;
    if (index < items.length) {
      items[index] = last;
      this.#down(index);
      this.#up(index);
    }
    return true;
  }

  /** Removes every element. */
  clear(): void {
    this.#items.length = 0;
  }

  /** The elements in heap (not sorted) order. */
  values(): IterableIterator<T> {
    return this.#items.values();
  }

  #up(index: number): void {
    const items = this.#items;
    const item = items[index] as T;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = items[parentIndex] as T;
      if (this.#compare(item, parent) >= 0) break;
      items[index] = parent;
      index = parentIndex;
    }
    items[index] = item;
  }

  #down(index: number): void {
    const items = this.#items;
    const length = items.length;
    const item = items[index] as T;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      let child = left;
      if (right < length && this.#compare(items[right] as T, items[left] as T) < 0) child = right;
      if (this.#compare(items[child] as T, item) >= 0) break;
      items[index] = items[child] as T;
      index = child;
    }
    items[index] = item;
  }
}

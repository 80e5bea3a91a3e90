// An intrusive-handle FIFO: O(1) push, shift and removal from the middle, which the scheduler
// needs for aborted waiters and for transfers leaving the round-robin ring.

/** A position in a {@link LinkedQueue}, returned by `push` and accepted by `remove`. */
export interface QueueNode<T> {
  readonly value: T;
  /** @internal */ prev: QueueNode<T> | undefined;
  /** @internal */ next: QueueNode<T> | undefined;
  /** @internal */ owner: LinkedQueue<T> | undefined;
}

/**
 * A doubly linked FIFO queue. Each `push` returns a node handle, so an element can be removed in
 * O(1) without searching for it.
 * @internal
 */
export class LinkedQueue<T> {
  #head: QueueNode<T> | undefined;
  #tail: QueueNode<T> | undefined;
  #size = 0;

  /** Number of elements. */
  get size(): number {
    return this.#size;
  }

  /** The first element, or `undefined` when empty. */
  peek(): T | undefined {
    return this.#head?.value;
  }

  /** Appends `value` and returns its node. */
  push(value: T): QueueNode<T> {
    const node: QueueNode<T> = { value, prev: this.#tail, next: undefined, owner: this };
    if (this.#tail === undefined) this.#head = node;
    else this.#tail.next = node;
    this.#tail = node;
    this.#size++;
    return node;
  }

  /** Removes and returns the first element, or `undefined` when empty. */
  shift(): T | undefined {
    const head = this.#head;
    if (head === undefined) return undefined;
    this.remove(head);
    return head.value;
  }

  /** Removes `node`; returns whether it was in this queue (removing twice is a no-op). */
  remove(node: QueueNode<T>): boolean {
    if (node.owner !== this) return false;
    if (node.prev === undefined) this.#head = node.next;
    else node.prev.next = node.next;
    if (node.next === undefined) this.#tail = node.prev;
    else node.next.prev = node.prev;
    node.prev = undefined;
    node.next = undefined;
    node.owner = undefined;
    this.#size--;
    return true;
  }

  /** Moves the first element to the back (one step of a round robin). */
  rotate(): void {
    const head = this.#head;
    if (head === undefined || head === this.#tail) return;
    this.remove(head);
    head.prev = this.#tail;
    head.owner = this;
    (this.#tail as QueueNode<T>).next = head;
    this.#tail = head;
    this.#size++;
  }

  /** Iterates from front to back. Do not modify the queue while iterating. */
  *[Symbol.iterator](): IterableIterator<T> {
    for (let node = this.#head; node !== undefined; node = node.next) yield node.value;
  }
}

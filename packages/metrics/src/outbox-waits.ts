// How long outbox ops wait before their first attempt, pieced together from the events of an
// outbox 0.2 (they carry no times): an op's enqueue time is kept until it starts or leaves. It
// stays because this package requires no outbox version (it never loads the outbox) and reads
// 0.2, which is released; without it an outbox 0.2 would leave queue waits unmeasured.

/** One op waiting for its first attempt. */
interface Waiting {
  readonly key: string | undefined;
  priority: number;
  readonly at: number;
  readonly seq: number;
}

const before = (a: Waiting, b: Waiting): boolean =>
  a.priority < b.priority ||
  (a.priority === b.priority && (a.at < b.at || (a.at === b.at && a.seq < b.seq)));

/**
 * Enqueue times of waiting ops, at most `maxTracked` of them. A keyed op is known by its chat and
 * key. Ops without a key are told apart only by their place in their chat's line: the one that
 * starts is the chat's first by (priority, enqueue time), as the outbox orders them; one that
 * leaves unstarted (aborted, closed) is taken to be the chat's youngest.
 */
export class OutboxWaits {
  readonly #maxTracked: number;
  readonly #keyed = new Map<string, Waiting>();
  readonly #unique = new Map<string, Waiting[]>();
  #size = 0;
  #seq = 0;

  constructor(maxTracked: number) {
    this.#maxTracked = maxTracked;
  }

  /** Ops tracked now. */
  get size(): number {
    return this.#size;
  }

  /** A new op entered the chat's line at `now`. */
  enqueued(chat: string | undefined, key: string | undefined, priority: number, now: number): void {
    if (this.#size >= this.#maxTracked) return;
    const waiting: Waiting = { key, priority, at: now, seq: this.#seq++ };
    if (key === undefined) {
      const line = this.#unique.get(lineOf(chat));
      if (line === undefined) this.#unique.set(lineOf(chat), [waiting]);
      else line.push(waiting);
    } else {
      this.#keyed.set(identityOf(chat, key), waiting);
    }
    this.#size++;
  }

  /** A newer op took a waiting op's place: same enqueue time, maybe a new priority. */
  coalesced(chat: string | undefined, key: string | undefined, priority: number): void {
    if (key === undefined) return;
    const waiting = this.#keyed.get(identityOf(chat, key));
    if (waiting !== undefined) waiting.priority = priority;
  }

  /** An op's first attempt started; returns when it was enqueued, if known. */
  started(chat: string | undefined, key: string | undefined): number | undefined {
    if (key !== undefined) return this.#takeKeyed(chat, key)?.at;
    const line = this.#unique.get(lineOf(chat));
    if (line === undefined) return undefined;
    let first = 0;
    for (let index = 1; index < line.length; index++) {
      if (before(line[index] as Waiting, line[first] as Waiting)) first = index;
    }
    const [waiting] = line.splice(first, 1);
    this.#shortened(chat, line);
    return waiting?.at;
  }

  /** An op left without starting (aborted, dropped, closed). */
  left(chat: string | undefined, key: string | undefined): void {
    if (key !== undefined) {
      this.#takeKeyed(chat, key);
      return;
    }
    const line = this.#unique.get(lineOf(chat));
    if (line === undefined) return;
    line.pop();
    this.#shortened(chat, line);
  }

  #takeKeyed(chat: string | undefined, key: string): Waiting | undefined {
    const identity = identityOf(chat, key);
    const waiting = this.#keyed.get(identity);
    if (waiting !== undefined) {
      this.#keyed.delete(identity);
      this.#size--;
    }
    return waiting;
  }

  /** One op left a (non-empty) line of unkeyed ops. */
  #shortened(chat: string | undefined, line: Waiting[]): void {
    this.#size--;
    if (line.length === 0) this.#unique.delete(lineOf(chat));
  }
}

// Chat keys never start with a NUL, so chat-less ops get a line of their own.
function lineOf(chat: string | undefined): string {
  return chat ?? "\u0000";
}

function identityOf(chat: string | undefined, key: string): string {
  return `${lineOf(chat)}\u0000${key}`;
}

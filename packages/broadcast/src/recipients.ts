// Where a broadcast's recipients come from, read by position so a resumed or shared broadcast can
// start anywhere: an array, a cursor (a function from a position to the recipients from there on),
// or an iterable read once, front to back. Nothing is read ahead beyond what is sent.

import { describeValue } from "@telepace/core";
import type { ChatId } from "@telepace/outbox";

/**
 * The recipients of a broadcast, in a stable order: position `n` must name the same chat every
 * time the broadcast reads it, in every process.
 *
 * - an array of chat ids (10^6 numbers are about 8 MB; for more, or for ids in a database, use a
 *   cursor);
 * - a cursor `(from) => iterable`: the recipients from position `from` on, sync or async (a
 *   generator over your store's query, ordered by a stable key). Resumes and other processes
 *   start it where they need to;
 * - an (async) iterable, read once, front to back: a broadcast in one process can resume from it
 *   (it skips what was done), but several processes cannot share it.
 */
export type RecipientSource =
  | readonly ChatId[]
  | ((from: number) => Iterable<ChatId> | AsyncIterable<ChatId>)
  | Iterable<ChatId>
  | AsyncIterable<ChatId>;

/** What a read past the last recipient returns. */
export const END: unique symbol = Symbol("end of recipients");

type AnyIterator = Iterator<unknown> | AsyncIterator<unknown>;

function iteratorOf(value: unknown, what: string): AnyIterator {
  if (typeof value === "object" && value !== null) {
    const async = (value as AsyncIterable<unknown>)[Symbol.asyncIterator];
    if (typeof async === "function") return async.call(value);
    const sync = (value as Iterable<unknown>)[Symbol.iterator];
    if (typeof sync === "function") return sync.call(value);
  }
  throw new TypeError(
    `Expected ${what} to be an iterable or async iterable, got ${describeValue(value)}`,
  );
}

/**
 * Checks a source's shape (not its contents, which are read as the broadcast goes).
 *
 * @throws {TypeError} when `recipients` is none of the accepted shapes.
 */
export function checkRecipients(recipients: unknown): RecipientSource {
  if (Array.isArray(recipients) || typeof recipients === "function") {
    return recipients as RecipientSource;
  }
  if (
    typeof recipients === "object" &&
    recipients !== null &&
    (typeof (recipients as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function" ||
      typeof (recipients as Iterable<unknown>)[Symbol.iterator] === "function")
  ) {
    return recipients as RecipientSource;
  }
  throw new TypeError(
    `Expected \`recipients\` to be an array of chat ids, a function (from) => iterable, or an (async) iterable, got ${describeValue(recipients)}`,
  );
}

/** Whether a value read from a source is a chat id a send can use. */
export function isChatId(value: unknown): value is ChatId {
  return (
    (typeof value === "number" && Number.isSafeInteger(value) && value !== 0) ||
    (typeof value === "string" && value.length > 0)
  );
}

/**
 * Reads a source by position. An array and a cursor can seek anywhere (a cursor's iteration is
 * kept open while reads go on from where it is); an iterable only forward.
 */
export class RecipientReader {
  readonly #source: RecipientSource;
  /** Whether any position can be read at any time (array or cursor). */
  readonly isRandomAccess: boolean;
  #iterator: AnyIterator | undefined;
  /** The position the open iterator (or the one-shot source) reads next. */
  #position = 0;
  #ended = false;

  constructor(source: RecipientSource) {
    this.#source = source;
    this.isRandomAccess = Array.isArray(source) || typeof source === "function";
  }

  /** The number of recipients when the source says it up front (an array). */
  get knownTotal(): number | undefined {
    return Array.isArray(this.#source) ? this.#source.length : undefined;
  }

  /**
   * The recipient at `position`, or {@link END} past the last one. Reads must go forward for a
   * one-shot iterable (a cursor reopens itself when asked for an earlier position).
   */
  async read(position: number): Promise<unknown> {
    const source = this.#source;
    if (Array.isArray(source)) return position < source.length ? source[position] : END;
    if (this.#iterator === undefined || position !== this.#position) await this.#seek(position);
    if (this.#ended) return END;
    const step = await (this.#iterator as AnyIterator).next();
    if (step.done === true) {
      this.#ended = true;
      return END;
    }
    this.#position++;
    return step.value;
  }

  /** Ends an open iteration (a cursor's query), if any. */
  async close(): Promise<void> {
    const iterator = this.#iterator;
    this.#iterator = undefined;
    await iterator?.return?.();
  }

  async #seek(position: number): Promise<void> {
    const source = this.#source;
    if (typeof source === "function") {
      await this.close();
      this.#iterator = iteratorOf(source(position), "what `recipients(from)` returns");
      this.#position = position;
      this.#ended = false;
      return;
    }
    this.#iterator ??= iteratorOf(source, "`recipients`");
    if (position < this.#position) {
      throw new RangeError(
        `Recipients read once cannot go back to position ${position} (at ${this.#position}): pass an array or a function (from) => iterable`,
      );
    }
    while (this.#position < position && !this.#ended) {
      const step = await this.#iterator.next();
      if (step.done === true) this.#ended = true;
      else this.#position++;
    }
  }
}

// The text of one stream and the split it has committed to: cuts already sent stay where they
// were made, and the next cut never comes before what a preview of that message already showed.

import type { MessageEntity, ParseMode } from "@grammyjs/types";
import { hasVisibleText } from "./message-text.js";
import { type PlacedChunk, splitCommitted } from "./split-text.js";

/** The latest text of a stream, split into messages consistently with what was shown. */
export class StreamText {
  readonly #parseMode: ParseMode | undefined;
  readonly #limit: number;
  #text = "";
  #entities: readonly MessageEntity[] | undefined;
  #version = 0;
  /** Where each message already sent ends (source offsets). */
  readonly #ends: number[] = [];
  /** How far a preview showed the first message not sent yet (source offset). */
  #shownUpTo = 0;
  /** The last split, and the state it was made of. */
  #split: { readonly key: string; readonly chunks: readonly PlacedChunk[] } | undefined;

  constructor(parseMode: ParseMode | undefined, limit: number) {
    this.#parseMode = parseMode;
    this.#limit = limit;
  }

  /** The whole text so far. */
  get value(): string {
    return this.#text;
  }

  /** Bumped on every change: a frame knows whether it showed the newest text. */
  get version(): number {
    return this.#version;
  }

  /** Messages of the text already sent (or skipped as empty). */
  get sealed(): number {
    return this.#ends.length;
  }

  /** Appends a piece (the text before it is unchanged, so what was shown stays valid). */
  append(piece: string): void {
    this.#set(this.#text + piece, this.#entities);
  }

  /** Replaces the whole text; a preview of text that changed no longer binds the split. */
  replace(text: string, entities: readonly MessageEntity[] | undefined): void {
    if (!text.startsWith(this.#text.slice(0, this.#shownUpTo))) {
      this.#shownUpTo = this.#ends.at(-1) ?? 0;
    }
    this.#set(text, entities);
  }

  #set(text: string, entities: readonly MessageEntity[] | undefined): void {
    this.#text = text;
    this.#entities = entities;
    this.#version++;
  }

  /**
   * Every message of the text: those sent, the live one, and any past the limit. A frame asks
   * several times before the text changes: the split is kept until the text or a cut changes.
   */
  chunks(isComplete: boolean): readonly PlacedChunk[] {
    const key = `${this.#version}:${this.#ends.length}:${this.#shownUpTo}:${isComplete}`;
    if (this.#split?.key === key) return this.#split.chunks;
    const format =
      this.#parseMode === undefined ? { entities: this.#entities } : { parseMode: this.#parseMode };
    const chunks = splitCommitted(
      this.#text,
      format,
      { limit: this.#limit, isComplete },
      { ends: this.#ends, shownUpTo: this.#shownUpTo },
    );
    this.#split = { key, chunks };
    return chunks;
  }

  /** The message being streamed now: the first not yet sent. */
  live(isComplete = false): PlacedChunk | undefined {
    return this.chunks(isComplete)[this.sealed];
  }

  /** A preview (a draft frame, a progress message or edit) showed `chunk`. */
  shown(chunk: PlacedChunk): void {
    this.#shownUpTo = Math.max(this.#shownUpTo, chunk.end);
  }

  /** `chunk`, the live message, was sent (or skipped): its cut stays where it is. */
  seal(chunk: PlacedChunk): void {
    this.#ends.push(Math.max(chunk.end, this.#ends.at(-1) ?? 0));
    this.#shownUpTo = Math.max(this.#shownUpTo, chunk.end);
  }

  /**
   * Whether a part may end where a preview of it (`shown`) ends, instead of at the cut of `full`:
   * plain text (no markup to close), at least half a message long, ending at whitespace.
   */
  mayEndAsShown(shown: PlacedChunk, full: PlacedChunk): boolean {
    if (this.#parseMode !== undefined || shown.end > full.end) return false;
    const last = shown.text.at(-1);
    return last !== undefined && /\s/u.test(last) && shown.text.length * 2 >= this.#limit;
  }

  /** Whether Telegram would show anything of `chunk` (it refuses a message with nothing). */
  isVisible(chunk: PlacedChunk): boolean {
    return hasVisibleText(chunk.text, this.#parseMode);
  }

  /** The text fields of a request showing `chunk`. */
  params(chunk: {
    readonly text: string;
    readonly entities?: readonly MessageEntity[] | undefined;
  }) {
    return {
      text: chunk.text,
      ...(this.#parseMode === undefined ? {} : { parse_mode: this.#parseMode }),
      ...(chunk.entities === undefined || chunk.entities.length === 0
        ? {}
        : { entities: chunk.entities }),
    };
  }
}

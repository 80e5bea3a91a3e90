// Splitting a text longer than a message into messages: at a paragraph, line or word boundary
// where one exists, never inside a surrogate pair, an escape or a tag, with formatting that spans
// the cut closed at the end of one message and reopened at the start of the next.

import type { MessageEntity } from "@grammyjs/types";
import { type Atom, atomize, type TextFormat } from "./message-text.js";

/** Telegram's limit on a message's text, in UTF-16 units after entity parsing. */
export const MESSAGE_TEXT_LIMIT = 4096;

/** One message's worth of a split text. */
export interface TextChunk {
  /** The source of this message, markup closed and reopened as needed. */
  readonly text: string;
  /** The explicit entities of this message, offsets relative to it (entities texts only). */
  readonly entities?: readonly MessageEntity[] | undefined;
}

/** Options of {@link splitMessageText}. */
export interface SplitOptions {
  /** Most UTF-16 units per message. Range: integer >= 16. @defaultValue 4096 */
  readonly limit?: number | undefined;
  /**
   * Whether the text is final. A text still being streamed may end inside a tag or an escape:
   * that tail is left out and open formatting is closed, so every frame parses.
   * @defaultValue true
   */
  readonly isComplete?: boolean | undefined;
}

/**
 * What a stream has already committed to about its split (internal: the stream's own state).
 * Offsets are into the source; one inside an atom counts as that atom's end.
 */
export interface SplitCommitments {
  /** Where the messages already sent end, in order: those cuts stay where they were made. */
  readonly ends?: readonly number[] | undefined;
  /**
   * How far a preview (a draft frame, a progress edit) already showed the first message not yet
   * sent: its cut is never placed before this, so the message holds what its preview showed.
   */
  readonly shownUpTo?: number | undefined;
}

/** A {@link TextChunk} with where it ends in the source. */
export interface PlacedChunk extends TextChunk {
  /** Source offset just past the chunk's last atom (its closers and a partial tail excluded). */
  readonly end: number;
}

interface Cut {
  readonly start: number;
  readonly end: number;
}

/** Atom indices of the commitments, given each atom boundary's source offset. */
function committedCuts(offsets: readonly number[], commitments: SplitCommitments | undefined) {
  // The first atom boundary at or after `offset` (binary search: offsets ascend).
  const atomAt = (offset: number): number => {
    let low = 0;
    let high = offsets.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((offsets[middle] as number) < offset) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const fixed: number[] = [];
  for (const end of commitments?.ends ?? []) {
    const index = atomAt(end);
    if (index <= (fixed.at(-1) ?? 0)) break;
    fixed.push(index);
  }
  const shown = commitments?.shownUpTo;
  return { fixed, shownEnd: shown === undefined ? 0 : atomAt(shown) };
}

function isSpace(raw: string): boolean {
  return raw === " " || raw === "\t";
}

/** Lower is a better place to end a message. */
function boundaryRank(atoms: readonly Atom[], end: number, isInside: boolean): number {
  const last = atoms[end - 1]?.raw ?? "";
  const rank =
    last === "\n"
      ? atoms[end - 2]?.raw === "\n"
        ? 0
        : 1
      : isSpace(last)
        ? 2
        : /\p{P}/u.test(last)
          ? 3
          : 4;
  return rank + (isInside ? 5 : 0);
}

/**
 * Where each message of the text ends. `inside(end)` says whether a cut there would fall inside
 * formatting; a cut is never placed after an opening tag or before a closing one. The `fixed`
 * cuts come first as they are; the next one is placed no earlier than `shownEnd`.
 */
function cutPoints(
  atoms: readonly Atom[],
  limit: number,
  inside: (end: number) => boolean,
  fixed: readonly number[] = [],
  shownEnd = 0,
): Cut[] {
  const prefix = new Float64Array(atoms.length + 1);
  for (let index = 0; index < atoms.length; index++) {
    prefix[index + 1] = (prefix[index] as number) + (atoms[index] as Atom).visible;
  }
  const total = prefix[atoms.length] as number;
  const cuts: Cut[] = [];
  let start = 0;
  for (const end of fixed) {
    cuts.push({ start, end });
    start = end;
  }
  while (total - (prefix[start] as number) > limit) {
    const base = prefix[start] as number;
    let fits = start;
    while (fits < atoms.length && (prefix[fits + 1] as number) - base <= limit) fits++;
    // Only the first free cut has had a preview; a preview never showed more than fits.
    const floor = cuts.length === fixed.length ? Math.min(shownEnd, fits) : 0;
    let best = -1;
    let bestRank = Number.POSITIVE_INFINITY;
    for (let end = fits; end > Math.max(start, floor - 1); end--) {
      if ((prefix[end] as number) - base < limit / 2 && best >= 0) break;
      const atom = atoms[end - 1] as Atom;
      if (atom.kind === "open" || atoms[end]?.kind === "close") continue;
      const rank = boundaryRank(atoms, end, inside(end));
      if (rank < bestRank) {
        best = end;
        bestRank = rank;
      }
    }
    if (best < 0) best = Math.max(fits, start + 1);
    cuts.push({ start, end: best });
    start = best;
  }
  cuts.push({ start, end: atoms.length });
  return cuts;
}

function closerKey(atom: Atom): string {
  return atom.kind === "close" && atom.raw.startsWith("</")
    ? `</${(/^<\/\s*([\w-]+)/.exec(atom.raw)?.[1] ?? "").toLowerCase()}>`
    : atom.raw;
}

/** The formatting open after each atom, for texts with a `parse_mode`. */
function openSpans(atoms: readonly Atom[]): Atom[][] {
  const stacks: Atom[][] = [[]];
  let stack: Atom[] = [];
  for (const atom of atoms) {
    if (atom.kind === "open") stack = [...stack, atom];
    else if (atom.kind === "close") {
      const key = closerKey(atom);
      const at = stack.findLastIndex((open) => open.closer === key);
      if (at >= 0) stack = [...stack.slice(0, at), ...stack.slice(at + 1)];
    } else if (atom.raw === "\n" && stack.some((open) => open.endsAtLine)) {
      stack = stack.filter((open) => !open.endsAtLine);
    }
    stacks.push(stack);
  }
  return stacks;
}

function closers(stack: readonly Atom[]): string {
  let text = "";
  for (let index = stack.length - 1; index >= 0; index--) text += stack[index]?.closer ?? "";
  return text;
}

function checkLimit(limit: unknown): number {
  if (limit === undefined) return MESSAGE_TEXT_LIMIT;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 16) {
    throw new RangeError(`Expected \`limit\` to be an integer >= 16, got ${String(limit)}`);
  }
  return limit;
}

/** Each atom boundary's offset in the source. */
function sourceOffsets(atoms: readonly Atom[]): number[] {
  const offsets = [0];
  for (const atom of atoms) offsets.push((offsets[offsets.length - 1] as number) + atom.raw.length);
  return offsets;
}

function splitMarkup(
  source: string,
  format: TextFormat,
  limit: number,
  isComplete: boolean,
  commitments: SplitCommitments | undefined,
): PlacedChunk[] {
  const { atoms, partialTail } = atomize(source, format.parseMode);
  const offsets = sourceOffsets(atoms);
  const stacks = openSpans(atoms);
  const { fixed, shownEnd } = committedCuts(offsets, commitments);
  const inside = (end: number) => (stacks[end] as Atom[]).length > 0;
  const cuts = cutPoints(atoms, limit, inside, fixed, shownEnd);
  return cuts.map(({ start, end }, index): PlacedChunk => {
    const opening = stacks[start] as Atom[];
    const closing = stacks[end] as Atom[];
    let text = opening.map((atom) => atom.raw).join("");
    for (let at = start; at < end; at++) text += (atoms[at] as Atom).raw;
    const isLast = index === cuts.length - 1;
    if (isLast && isComplete) text += partialTail;
    else text += closers(closing);
    return { text, end: offsets[end] as number };
  });
}

function splitEntities(
  source: string,
  entities: readonly MessageEntity[],
  limit: number,
  commitments: SplitCommitments | undefined,
): PlacedChunk[] {
  const { atoms } = atomize(source, undefined);
  const offsets = sourceOffsets(atoms);
  const offsetOf = (index: number) => offsets[index] as number;
  const { fixed, shownEnd } = committedCuts(offsets, commitments);
  const inside = (end: number) => {
    const at = offsetOf(end);
    return entities.some((entity) => entity.offset < at && at < entity.offset + entity.length);
  };
  const cuts = cutPoints(atoms, limit, inside, fixed, shownEnd);
  return cuts.map(({ start, end }): PlacedChunk => {
    const from = offsetOf(start);
    const to = offsetOf(end);
    const own: MessageEntity[] = [];
    for (const entity of entities) {
      const a = Math.max(entity.offset, from);
      const b = Math.min(entity.offset + entity.length, to);
      if (b > a) own.push({ ...entity, offset: a - from, length: b - a });
    }
    return { text: source.slice(from, to), entities: own, end: to };
  });
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Plain text (no parse mode, no entities) split as {@link splitMarkup} splits it, without
 * atomizing the text: an atom is a code point and shows as its UTF-16 length, so atom boundaries
 * are source offsets outside a surrogate pair, and only the offsets a cut may take are visited.
 * A stream splits its whole text before every frame; this keeps that independent of its length.
 */
function splitPlain(
  source: string,
  limit: number,
  commitments: SplitCommitments | undefined,
): PlacedChunk[] {
  const length = source.length;
  const isBoundary = (offset: number) =>
    offset <= 0 ||
    offset >= length ||
    !(isHighSurrogate(source.charCodeAt(offset - 1)) && isLowSurrogate(source.charCodeAt(offset)));
  // The first atom boundary at or after `offset`.
  const boundaryAt = (offset: number) =>
    offset <= 0 ? 0 : offset >= length ? length : isBoundary(offset) ? offset : offset + 1;
  // The code point that ends at `end` (a boundary > 0).
  const pointBefore = (end: number) =>
    end >= 2 && !isBoundary(end - 1) ? source.slice(end - 2, end) : source.charAt(end - 1);
  const rankAt = (end: number) => {
    const last = pointBefore(end);
    if (last === "\n") return end >= 2 && source.charAt(end - 2) === "\n" ? 0 : 1;
    if (isSpace(last)) return 2;
    return /\p{P}/u.test(last) ? 3 : 4;
  };
  const cuts: Cut[] = [];
  let start = 0;
  for (const end of commitments?.ends ?? []) {
    const at = boundaryAt(end);
    if (at <= start) break;
    cuts.push({ start, end: at });
    start = at;
  }
  const fixedCount = cuts.length;
  const shownEnd = boundaryAt(commitments?.shownUpTo ?? 0);
  while (length - start > limit) {
    const fits = isBoundary(start + limit) ? start + limit : start + limit - 1;
    const floor = cuts.length === fixedCount ? Math.min(shownEnd, fits) : 0;
    let best = -1;
    let bestRank = Number.POSITIVE_INFINITY;
    for (let end = fits; end > start && end >= floor; end--) {
      if (!isBoundary(end)) continue;
      if (end - start < limit / 2 && best >= 0) break;
      const rank = rankAt(end);
      if (rank < bestRank) {
        best = end;
        bestRank = rank;
      }
    }
    if (best < 0) best = Math.max(fits, boundaryAt(start + 1));
    cuts.push({ start, end: best });
    start = best;
  }
  cuts.push({ start, end: length });
  return cuts.map(({ start: from, end }) => ({ text: source.slice(from, end), end }));
}

/**
 * {@link splitMessageText} for a stream: the cuts it already made stay, and the next one is
 * placed no earlier than what its preview showed (internal).
 */
export function splitCommitted(
  source: string,
  format: TextFormat,
  options: SplitOptions,
  commitments: SplitCommitments | undefined,
): PlacedChunk[] {
  const limit = checkLimit(options.limit);
  const isComplete = options.isComplete ?? true;
  if (format.parseMode === undefined && format.entities !== undefined) {
    const clipped = format.entities.filter((entity) => entity.offset < source.length);
    return splitEntities(source, clipped, limit, commitments);
  }
  if (format.parseMode === undefined) return splitPlain(source, limit, commitments);
  return splitMarkup(source, format, limit, isComplete, commitments);
}

/**
 * Splits a text into messages of at most `limit` (4096) UTF-16 units as Telegram counts them:
 * after its `parse_mode` markup (HTML, MarkdownV2, Markdown) is parsed, or with its explicit
 * `entities` (each message gets its own, shifted). Each message ends at the last paragraph break
 * in its second half, else a line break, a space or punctuation, preferring places outside any
 * formatting; never inside a surrogate pair, an escape, an HTML entity or a tag. Formatting that
 * spans a cut is closed and reopened, so every message parses on its own.
 *
 * @example
 * splitMessageText(longAnswer, { parseMode: "HTML" }).map((chunk) => chunk.text);
 * @throws {RangeError} when `limit` is not an integer >= 16.
 */
export function splitMessageText(
  source: string,
  format: TextFormat = {},
  options: SplitOptions = {},
): TextChunk[] {
  return splitCommitted(source, format, options, undefined).map(({ end: _end, ...chunk }) => chunk);
}

// A message's text as Telegram counts it: split into atoms (a character, an escape, a markup tag)
// with their visible length in UTF-16 units, so a long text splits where no atom is cut.

import type { MessageEntity, ParseMode } from "@grammyjs/types";

/** How a text is formatted: a `parse_mode`, explicit `entities`, or neither (plain). */
export interface TextFormat {
  readonly parseMode?: ParseMode | undefined;
  readonly entities?: readonly MessageEntity[] | undefined;
}

/** One indivisible piece of a text's source. */
export interface Atom {
  /** The source characters. */
  readonly raw: string;
  /** UTF-16 units it shows as (0 for markup). */
  readonly visible: number;
  /** `open` starts a formatted span (closed by `closer`), `close` ends the innermost match. */
  readonly kind: "char" | "open" | "close";
  /** What closes this span (`</b>`, `*`, `](url)`); for `open` atoms. */
  readonly closer?: string;
  /** Marks a span that ends at the line's end (a MarkdownV2 `>` quote). */
  readonly endsAtLine?: boolean;
}

/** A source cut into atoms; `complete` is false when it ends inside a tag, escape or link. */
export interface AtomizedText {
  readonly atoms: readonly Atom[];
  /** Source characters at the end that form no complete atom yet (a streamed `<b` or `\`). */
  readonly partialTail: string;
}

function codePointAt(source: string, index: number): string {
  const code = source.charCodeAt(index);
  if (code >= 0xd800 && code <= 0xdbff && index + 1 < source.length) {
    const next = source.charCodeAt(index + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return source.slice(index, index + 2);
  }
  return source.charAt(index);
}

function plainAtoms(source: string): AtomizedText {
  const atoms: Atom[] = [];
  for (let index = 0; index < source.length; ) {
    const raw = codePointAt(source, index);
    atoms.push({ raw, visible: raw.length, kind: "char" });
    index += raw.length;
  }
  return { atoms, partialTail: "" };
}

const HTML_TAG = /^<\/?\s*([a-zA-Z][\w-]*)[^<>]*>/;
const HTML_ENTITY = /^&(#\d{1,7}|#x[\da-fA-F]{1,6}|[a-zA-Z]{1,8});/;

function htmlAtoms(source: string): AtomizedText {
  const atoms: Atom[] = [];
  for (let index = 0; index < source.length; ) {
    const rest = source.slice(index, index + 512);
    if (rest.startsWith("<")) {
      const tag = HTML_TAG.exec(rest);
      if (tag === null) {
        if (!rest.includes(">")) return { atoms, partialTail: source.slice(index) };
        atoms.push({ raw: "<", visible: 1, kind: "char" }); // Telegram rejects it; counted, kept
        index += 1;
        continue;
      }
      const raw = tag[0];
      const name = (tag[1] as string).toLowerCase();
      atoms.push(
        raw.startsWith("</")
          ? { raw, visible: 0, kind: "close" }
          : { raw, visible: 0, kind: "open", closer: `</${name}>` },
      );
      index += raw.length;
      continue;
    }
    if (rest.startsWith("&")) {
      const entity = HTML_ENTITY.exec(rest);
      if (entity !== null) {
        atoms.push({ raw: entity[0], visible: 1, kind: "char" });
        index += entity[0].length;
        continue;
      }
      if (/^&[#\w]{0,9}$/.test(rest)) return { atoms, partialTail: source.slice(index) };
    }
    const raw = codePointAt(source, index);
    atoms.push({ raw, visible: raw.length, kind: "char" });
    index += raw.length;
  }
  return { atoms, partialTail: "" };
}

const V2_MARKERS = ["```", "||", "__", "*", "_", "~", "`"] as const;
const LEGACY_MARKERS = ["```", "*", "_", "`"] as const;

/** MarkdownV2 (and legacy Markdown, with its smaller set of markers and escapes). */
function markdownAtoms(source: string, isV2: boolean): AtomizedText {
  const atoms: Atom[] = [];
  const markers: readonly string[] = isV2 ? V2_MARKERS : LEGACY_MARKERS;
  const open: string[] = [];
  let code: "`" | "```" | undefined;
  let lineStart = true;
  for (let index = 0; index < source.length; ) {
    const char = source.charAt(index);
    if (char === "\\" && (isV2 || code === undefined)) {
      if (index + 1 >= source.length) return { atoms, partialTail: source.slice(index) };
      const escaped = codePointAt(source, index + 1);
      if (isV2 || "_*`[".includes(escaped)) {
        atoms.push({ raw: `\\${escaped}`, visible: escaped.length, kind: "char" });
        index += 1 + escaped.length;
        lineStart = false;
        continue;
      }
    }
    if (code !== undefined) {
      if (source.startsWith(code, index)) {
        atoms.push({ raw: code, visible: 0, kind: "close" });
        index += code.length;
        code = undefined;
        continue;
      }
      if (code === "```" && source.length - index < 3 && "```".startsWith(source.slice(index))) {
        return { atoms, partialTail: source.slice(index) };
      }
    } else {
      if (isV2 && lineStart && char === ">") {
        atoms.push({ raw: ">", visible: 0, kind: "open", closer: "", endsAtLine: true });
        index += 1;
        lineStart = false;
        continue;
      }
      if (char === "[") {
        const close = source.indexOf("](", index + 1);
        const end = close < 0 ? -1 : source.indexOf(")", close + 2);
        if (end < 0) return { atoms, partialTail: source.slice(index) };
        atoms.push({ raw: "[", visible: 0, kind: "open", closer: source.slice(close, end + 1) });
        index += 1;
        continue;
      }
      if (char === "]" && source.startsWith("](", index)) {
        const end = source.indexOf(")", index + 2);
        atoms.push({ raw: source.slice(index, end + 1), visible: 0, kind: "close" });
        index = end + 1;
        continue;
      }
      const marker = markers.find((candidate) => source.startsWith(candidate, index));
      if (marker !== undefined) {
        if (marker === "```" || marker === "`") {
          let raw = marker;
          if (marker === "```") {
            const newline = source.indexOf("\n", index + 3);
            const language = newline < 0 ? "" : source.slice(index + 3, newline + 1);
            if (newline < 0 && source.length - index < 64) {
              return { atoms, partialTail: source.slice(index) };
            }
            if (/^[\w+#-]*\n$/.test(language)) raw = `\`\`\`${language}`;
          }
          atoms.push({ raw, visible: 0, kind: "open", closer: marker });
          code = marker;
          index += raw.length;
          lineStart = raw.endsWith("\n");
          continue;
        }
        const at = open.lastIndexOf(marker);
        if (at >= 0) {
          open.splice(at, 1);
          atoms.push({ raw: marker, visible: 0, kind: "close" });
        } else {
          open.push(marker);
          atoms.push({ raw: marker, visible: 0, kind: "open", closer: marker });
        }
        index += marker.length;
        lineStart = false;
        continue;
      }
    }
    const raw = codePointAt(source, index);
    atoms.push({ raw, visible: raw.length, kind: "char" });
    index += raw.length;
    lineStart = raw === "\n";
  }
  return { atoms, partialTail: "" };
}

/** Cuts a source into atoms the way its `parse_mode` reads it. */
export function atomize(source: string, parseMode: ParseMode | undefined): AtomizedText {
  switch (parseMode) {
    case "HTML":
      return htmlAtoms(source);
    case "MarkdownV2":
      return markdownAtoms(source, true);
    case "Markdown":
      return markdownAtoms(source, false);
    default:
      return plainAtoms(source);
  }
}

/** The UTF-16 units a text shows as (after its markup is parsed). */
export function visibleLength(source: string, format: TextFormat = {}): number {
  let length = 0;
  for (const atom of atomize(source, format.parseMode).atoms) length += atom.visible;
  return length;
}

/**
 * Whether a text shows anything once its markup is parsed and its ends are trimmed (Telegram
 * refuses a message with nothing left). An HTML character reference counts as shown.
 */
export function hasVisibleText(source: string, parseMode: ParseMode | undefined): boolean {
  if (parseMode === undefined) return /\S/u.test(source);
  return atomize(source, parseMode).atoms.some((atom) => {
    if (atom.kind !== "char") return false;
    const shown = atom.raw.length > 1 && atom.raw.startsWith("\\") ? atom.raw.slice(1) : atom.raw;
    return /\S/u.test(shown);
  });
}

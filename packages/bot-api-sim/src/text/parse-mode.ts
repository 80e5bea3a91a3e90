// Telegram's three parse modes (HTML, MarkdownV2 and legacy Markdown) turned into plain text plus
// entities, with offsets in UTF-16 code units and errors worded like the real server's
// "can't parse entities: …" (byte offsets are UTF-8, as Telegram reports them).

import type { MessageEntity } from "@grammyjs/types";

/** A parse-mode syntax error; the message is what follows "can't parse entities: ". */
export class EntityParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EntityParseError";
  }
}

/** Text with its entities, offsets and lengths in UTF-16 code units. */
export interface ParsedText {
  readonly text: string;
  readonly entities: MessageEntity[];
}

function byteOffset(source: string, index: number): number {
  return Buffer.byteLength(source.slice(0, index), "utf8");
}

/** Sorts entities as Telegram returns them: by offset, outer (longer) first. */
export function sortEntities(entities: MessageEntity[]): MessageEntity[] {
  return entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
}

// ---------------------------------------------------------------------------------------------
// HTML

const HTML_ENTITY_TYPES: Readonly<Record<string, MessageEntity["type"]>> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  "tg-spoiler": "spoiler",
  span: "spoiler",
  a: "text_link",
  code: "code",
  pre: "pre",
  blockquote: "blockquote",
  "tg-emoji": "custom_emoji",
};

const NAMED_CHARACTERS: Readonly<Record<string, string>> = {
  lt: "<",
  gt: ">",
  amp: "&",
  quot: '"',
  apos: "'",
};

interface OpenTag {
  readonly name: string;
  readonly start: number;
  readonly attributes: ReadonlyMap<string, string>;
  /** Set by a nested `<code class="language-x">` inside `<pre>`. */
  language?: string;
}

function decodeCharacterReference(source: string, at: number): [string, number] | undefined {
  const match = /^&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]+);/.exec(source.slice(at, at + 12));
  if (match === null) return undefined;
  const body = match[1] as string;
  if (body.startsWith("#")) {
    const code =
      body[1] === "x" || body[1] === "X"
        ? Number.parseInt(body.slice(2), 16)
        : Number(body.slice(1));
    if (code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return undefined;
    return [String.fromCodePoint(code), match[0].length];
  }
  const named = NAMED_CHARACTERS[body.toLowerCase()];
  return named === undefined ? undefined : [named, match[0].length];
}

function parseAttributes(source: string): Map<string, string> {
  const attributes = new Map<string, string>();
  const pattern = /([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  for (const match of source.matchAll(pattern)) {
    const name = (match[1] as string).toLowerCase();
    const raw = match[2] ?? match[3] ?? match[4] ?? "";
    let value = "";
    for (let i = 0; i < raw.length; ) {
      const decoded = raw[i] === "&" ? decodeCharacterReference(raw, i) : undefined;
      if (decoded) {
        value += decoded[0];
        i += decoded[1];
      } else {
        value += raw[i];
        i++;
      }
    }
    if (!attributes.has(name)) attributes.set(name, value);
  }
  return attributes;
}

/** Parses `parse_mode=HTML`. */
export function parseHtml(source: string): ParsedText {
  let out = "";
  const entities: MessageEntity[] = [];
  const stack: OpenTag[] = [];
  let i = 0;
  while (i < source.length) {
    const char = source[i] as string;
    if (char === "&") {
      const decoded = decodeCharacterReference(source, i);
      if (decoded) {
        out += decoded[0];
        i += decoded[1];
        continue;
      }
      out += char;
      i++;
      continue;
    }
    if (char !== "<") {
      out += char;
      i++;
      continue;
    }
    const tagStart = i;
    const close = source.indexOf(">", i + 1);
    if (close < 0) {
      throw new EntityParseError(
        `Unclosed start tag at byte offset ${byteOffset(source, tagStart)}`,
      );
    }
    const inner = source.slice(i + 1, close);
    i = close + 1;
    if (inner.startsWith("/")) {
      const name = inner.slice(1).trim().toLowerCase();
      const top = stack.pop();
      if (top === undefined) {
        throw new EntityParseError(
          `Unexpected end tag at byte offset ${byteOffset(source, tagStart)}`,
        );
      }
      if (name !== top.name) {
        throw new EntityParseError(
          `Unmatched end tag at byte offset ${byteOffset(source, tagStart)}, expected "</${top.name}>", found "</${name}>"`,
        );
      }
      const length = out.length - top.start;
      const parent = stack[stack.length - 1];
      if (top.name === "code" && parent?.name === "pre" && parent.start === top.start) {
        const languageClass = top.attributes.get("class") ?? "";
        if (languageClass.startsWith("language-")) {
          parent.language = languageClass.slice("language-".length);
          continue;
        }
      }
      if (length > 0) entities.push(htmlEntity(top, length));
      continue;
    }
    const nameMatch = /^[a-zA-Z][a-zA-Z0-9-]*/.exec(inner);
    if (nameMatch === null) {
      throw new EntityParseError(`Empty tag name at byte offset ${byteOffset(source, tagStart)}`);
    }
    const name = nameMatch[0].toLowerCase();
    if (HTML_ENTITY_TYPES[name] === undefined) {
      throw new EntityParseError(
        `Unsupported start tag "${name}" at byte offset ${byteOffset(source, tagStart)}`,
      );
    }
    const attributes = parseAttributes(inner.slice(nameMatch[0].length));
    if (name === "span" && attributes.get("class") !== "tg-spoiler") {
      throw new EntityParseError(
        `Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(source, tagStart)}`,
      );
    }
    if (name === "tg-emoji" && !/^[0-9]+$/.test(attributes.get("emoji-id") ?? "")) {
      throw new EntityParseError(
        `Tag "tg-emoji" must have attribute "emoji-id" at byte offset ${byteOffset(source, tagStart)}`,
      );
    }
    stack.push({ name, start: out.length, attributes });
  }
  const unclosed = stack[stack.length - 1];
  if (unclosed !== undefined) {
    throw new EntityParseError(`Can't find end tag corresponding to start tag "${unclosed.name}"`);
  }
  return { text: out, entities: sortEntities(entities) };
}

function htmlEntity(tag: OpenTag, length: number): MessageEntity {
  const offset = tag.start;
  switch (tag.name) {
    case "a": {
      const url = tag.attributes.get("href") ?? "";
      return { type: "text_link", offset, length, url };
    }
    case "pre":
      return tag.language === undefined
        ? { type: "pre", offset, length }
        : { type: "pre", offset, length, language: tag.language };
    case "blockquote":
      return {
        type: tag.attributes.has("expandable") ? "expandable_blockquote" : "blockquote",
        offset,
        length,
      };
    case "tg-emoji":
      return {
        type: "custom_emoji",
        offset,
        length,
        custom_emoji_id: tag.attributes.get("emoji-id") ?? "",
      };
    default:
      return { type: HTML_ENTITY_TYPES[tag.name] as "bold", offset, length };
  }
}

// ---------------------------------------------------------------------------------------------
// MarkdownV2

const V2_RESERVED = new Set("_*[]()~`>#+-=|{}.!".split(""));

type V2Kind =
  | "bold"
  | "italic"
  | "underline"
  | "strikethrough"
  | "spoiler"
  | "text_link"
  | "custom_emoji"
  | "code"
  | "pre";

const V2_NAMES: Readonly<Record<V2Kind, string>> = {
  bold: "Bold",
  italic: "Italic",
  underline: "Underline",
  strikethrough: "Strikethrough",
  spoiler: "Spoiler",
  text_link: "TextUrl",
  custom_emoji: "CustomEmoji",
  code: "Code",
  pre: "Pre",
};

interface V2Open {
  readonly kind: V2Kind;
  readonly start: number;
  readonly sourceAt: number;
  readonly language?: string;
}

/** Parses `parse_mode=MarkdownV2`. */
export function parseMarkdownV2(source: string): ParsedText {
  let out = "";
  const entities: MessageEntity[] = [];
  const stack: V2Open[] = [];
  let quoteStart: number | undefined;
  let i = 0;
  const atLineStart = (): boolean => i === 0 || source[i - 1] === "\n";
  const closeQuote = (): void => {
    if (quoteStart !== undefined && out.length > quoteStart) {
      entities.push({ type: "blockquote", offset: quoteStart, length: out.length - quoteStart });
    }
    quoteStart = undefined;
  };
  while (i < source.length) {
    const char = source[i] as string;
    const top = stack[stack.length - 1];
    const inCode = top?.kind === "code" || top?.kind === "pre";
    if (char === "\\" && i + 1 < source.length) {
      const next = source.charCodeAt(i + 1);
      if (next > 0 && next <= 126) {
        out += source[i + 1];
        i += 2;
        continue;
      }
    }
    if (inCode) {
      const closer = top.kind === "pre" ? "```" : "`";
      if (source.startsWith(closer, i)) {
        stack.pop();
        const length = out.length - top.start;
        if (length > 0) {
          entities.push(
            top.kind === "pre" && top.language !== undefined
              ? { type: "pre", offset: top.start, length, language: top.language }
              : { type: top.kind, offset: top.start, length },
          );
        }
        i += closer.length;
        continue;
      }
      out += char;
      i++;
      continue;
    }
    if (char === "\n") {
      // A quote covers its lines, not the newline that ends it.
      if (quoteStart !== undefined && source[i + 1] !== ">") closeQuote();
      out += char;
      i++;
      continue;
    }
    if (char === ">" && atLineStart()) {
      quoteStart ??= out.length;
      i++;
      continue;
    }
    if (!V2_RESERVED.has(char)) {
      out += char;
      i++;
      continue;
    }
    const sourceAt = i;
    if (char === "`") {
      if (source.startsWith("```", i)) {
        const lineEnd = source.indexOf("\n", i + 3);
        const info = lineEnd < 0 ? "" : source.slice(i + 3, lineEnd);
        const hasLanguage = lineEnd >= 0 && /^[A-Za-z0-9_+#.-]+$/.test(info);
        stack.push(
          hasLanguage
            ? { kind: "pre", start: out.length, sourceAt, language: info }
            : { kind: "pre", start: out.length, sourceAt },
        );
        i += 3 + (hasLanguage ? info.length + 1 : 0);
        continue;
      }
      stack.push({ kind: "code", start: out.length, sourceAt });
      i++;
      continue;
    }
    if (char === "]" && (top?.kind === "text_link" || top?.kind === "custom_emoji")) {
      if (source[i + 1] !== "(") {
        throw new EntityParseError(
          `Can't find end of ${V2_NAMES[top.kind]} entity at byte offset ${byteOffset(source, top.sourceAt)}`,
        );
      }
      const urlEnd = source.indexOf(")", i + 2);
      if (urlEnd < 0) {
        throw new EntityParseError(
          `Can't find end of a URL at byte offset ${byteOffset(source, i + 2)}`,
        );
      }
      const url = source.slice(i + 2, urlEnd).replace(/\\([)\\])/g, "$1");
      stack.pop();
      const length = out.length - top.start;
      if (length > 0) {
        if (top.kind === "custom_emoji") {
          const id = /^tg:\/\/emoji\?id=([0-9]+)$/.exec(url)?.[1];
          if (id === undefined) {
            throw new EntityParseError(
              `Custom emoji URL must have an emoji identifier at byte offset ${byteOffset(source, i + 2)}`,
            );
          }
          entities.push({ type: "custom_emoji", offset: top.start, length, custom_emoji_id: id });
        } else {
          entities.push({ type: "text_link", offset: top.start, length, url });
        }
      }
      i = urlEnd + 1;
      continue;
    }
    if (char === "[") {
      stack.push({ kind: "text_link", start: out.length, sourceAt });
      i++;
      continue;
    }
    if (char === "!" && source[i + 1] === "[") {
      stack.push({ kind: "custom_emoji", start: out.length, sourceAt });
      i += 2;
      continue;
    }
    let kind: V2Kind | undefined;
    let width = 1;
    if (char === "*") kind = "bold";
    else if (char === "~") kind = "strikethrough";
    else if (char === "_") {
      if (source[i + 1] === "_" && top?.kind !== "italic") {
        kind = "underline";
        width = 2;
      } else kind = "italic";
    } else if (char === "|" && source[i + 1] === "|") {
      kind = "spoiler";
      width = 2;
    }
    if (kind === undefined) {
      throw new EntityParseError(
        `Character '${char}' is reserved and must be escaped with the preceding '\\'`,
      );
    }
    if (top?.kind === kind) {
      stack.pop();
      const length = out.length - top.start;
      if (length > 0) entities.push({ type: kind as "bold", offset: top.start, length });
    } else {
      stack.push({ kind, start: out.length, sourceAt });
    }
    i += width;
  }
  const unclosed = stack[stack.length - 1];
  if (unclosed !== undefined) {
    throw new EntityParseError(
      `Can't find end of ${V2_NAMES[unclosed.kind]} entity at byte offset ${byteOffset(source, unclosed.sourceAt)}`,
    );
  }
  closeQuote();
  return { text: out, entities: sortEntities(entities) };
}

// ---------------------------------------------------------------------------------------------
// Legacy Markdown

/** Parses `parse_mode=Markdown` (the legacy mode: no nesting, few escapes). */
export function parseMarkdown(source: string): ParsedText {
  let out = "";
  const entities: MessageEntity[] = [];
  let i = 0;
  const fail = (at: number): never => {
    throw new EntityParseError(
      `Can't find end of the entity starting at byte offset ${byteOffset(source, at)}`,
    );
  };
  while (i < source.length) {
    const char = source[i] as string;
    const next = source[i + 1];
    if (char === "\\" && (next === "_" || next === "*" || next === "`" || next === "[")) {
      out += next;
      i += 2;
      continue;
    }
    if (char !== "_" && char !== "*" && char !== "`" && char !== "[") {
      out += char;
      i++;
      continue;
    }
    const start = i;
    if (char === "[") {
      const close = source.indexOf("]", i + 1);
      if (close < 0) fail(start);
      if (source[close + 1] !== "(") {
        out += source.slice(i, close + 1);
        i = close + 1;
        continue;
      }
      const urlEnd = source.indexOf(")", close + 2);
      if (urlEnd < 0) fail(start);
      const label = source.slice(i + 1, close);
      const url = source.slice(close + 2, urlEnd);
      if (label.length > 0) {
        entities.push({ type: "text_link", offset: out.length, length: label.length, url });
      }
      out += label;
      i = urlEnd + 1;
      continue;
    }
    if (char === "`" && source.startsWith("```", i)) {
      const end = source.indexOf("```", i + 3);
      if (end < 0) fail(start);
      let body = source.slice(i + 3, end);
      let language: string | undefined;
      const newline = body.indexOf("\n");
      if (newline > 0 && /^[A-Za-z0-9_+#.-]+$/.test(body.slice(0, newline))) {
        language = body.slice(0, newline);
        body = body.slice(newline + 1);
      }
      if (body.length > 0) {
        entities.push(
          language === undefined
            ? { type: "pre", offset: out.length, length: body.length }
            : { type: "pre", offset: out.length, length: body.length, language },
        );
      }
      out += body;
      i = end + 3;
      continue;
    }
    const end = source.indexOf(char, i + 1);
    if (end < 0) fail(start);
    const body = source.slice(i + 1, end);
    const type = char === "*" ? "bold" : char === "_" ? "italic" : "code";
    if (body.length > 0) entities.push({ type, offset: out.length, length: body.length });
    out += body;
    i = end + 1;
  }
  return { text: out, entities: sortEntities(entities) };
}

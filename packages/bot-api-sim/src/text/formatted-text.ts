// Message text as Telegram stores it: parse_mode or explicit entities applied, surrounding
// whitespace trimmed, commands/mentions/hashtags/links detected, length counted in characters.

import type { MessageEntity } from "@grammyjs/types";
import { badRequest } from "../wire/api-failure.js";
import {
  EntityParseError,
  type ParsedText,
  parseHtml,
  parseMarkdown,
  parseMarkdownV2,
  sortEntities,
} from "./parse-mode.js";

/** Text limit of a message, in characters after entity parsing. */
export const MAX_TEXT_LENGTH = 4096;
/** Caption limit of a media message. */
export const MAX_CAPTION_LENGTH = 1024;

/** Entity types the server detects itself; explicit ones of these types are dropped. */
const DETECTED_TYPES = new Set([
  "mention",
  "hashtag",
  "cashtag",
  "bot_command",
  "url",
  "email",
  "phone_number",
  "bank_card_number",
]);

const SETTABLE_TYPES = new Set([
  "bold",
  "italic",
  "underline",
  "strikethrough",
  "spoiler",
  "code",
  "pre",
  "text_link",
  "text_mention",
  "custom_emoji",
  "blockquote",
  "expandable_blockquote",
  "date_time",
]);

/** Entities that hide their text from detection (code is code, a link is already a link). */
const OPAQUE_TYPES = new Set(["code", "pre", "text_link", "text_mention", "custom_emoji"]);

/** Characters in the sense of Telegram's limits: Unicode code points. */
export function characterLength(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

function parseExplicitEntities(raw: string | undefined): MessageEntity[] {
  if (raw === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    // The real server ignores entities it cannot decode as JSON.
    return [];
  }
  if (!Array.isArray(value)) return [];
  const entities: MessageEntity[] = [];
  for (const item of value) {
    if (typeof item !== "object" || item === null) {
      throw badRequest("can't parse MessageEntity: expected an Object");
    }
    const { type, offset, length } = item as Record<string, unknown>;
    if (typeof offset !== "number" || !Number.isInteger(offset)) {
      throw badRequest('can\'t parse MessageEntity: Field "offset" must be of type Number');
    }
    if (typeof length !== "number" || !Number.isInteger(length)) {
      throw badRequest('can\'t parse MessageEntity: Field "length" must be of type Number');
    }
    if (typeof type !== "string" || type.length === 0) {
      throw badRequest("can't parse MessageEntity: Type is not specified");
    }
    if (DETECTED_TYPES.has(type)) continue;
    if (!SETTABLE_TYPES.has(type)) {
      throw badRequest("can't parse MessageEntity: Unsupported type specified");
    }
    if (type === "text_link" && typeof (item as { url?: unknown }).url !== "string") {
      throw badRequest('can\'t parse MessageEntity: Field "url" must be of type String');
    }
    if (offset < 0 || length <= 0) continue;
    entities.push({ ...(item as MessageEntity), offset, length });
  }
  return entities;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** Trims whitespace at both ends, moving and clipping entities with the text. */
function trim(parsed: ParsedText): ParsedText {
  const { text } = parsed;
  let start = 0;
  let end = text.length;
  while (start < end && isSpace(text.charCodeAt(start))) start++;
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  if (start === 0 && end === text.length) return parsed;
  const entities: MessageEntity[] = [];
  for (const entity of parsed.entities) {
    const from = Math.max(entity.offset, start);
    const to = Math.min(entity.offset + entity.length, end);
    if (to > from) entities.push({ ...entity, offset: from - start, length: to - from });
  }
  return { text: text.slice(start, end), entities };
}

const DETECTORS: ReadonlyArray<readonly [MessageEntity["type"], RegExp]> = [
  [
    "bot_command",
    /(?<![\p{L}\p{N}_/@])\/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?![\p{L}\p{N}_/])/gu,
  ],
  [
    "email",
    /(?<![\p{L}\p{N}_.+-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?![\p{L}\p{N}_])/gu,
  ],
  ["mention", /(?<![\p{L}\p{N}_@.])@[A-Za-z][A-Za-z0-9_]{3,31}(?![\p{L}\p{N}_])/gu],
  ["hashtag", /(?<![\p{L}\p{N}_#&])#[\p{L}\p{N}_]*\p{L}[\p{L}\p{N}_]*/gu],
  ["cashtag", /(?<![\p{L}\p{N}_$])\$[A-Z]{3,8}(?![\p{L}\p{N}_])/gu],
  ["url", /(?<![\p{L}\p{N}_@.])(?:https?:\/\/|www\.)[^\s<>"]+/giu],
];

/** A character every detector's match starts with or contains ("/" also opens "https://"). */
const DETECTABLE = /[/@#$]|www\./i;

/** Adds the entities Telegram detects by itself, never overlapping existing ones. */
export function detectEntities(text: string, entities: MessageEntity[]): MessageEntity[] {
  // Most texts have none: skip six scans of each (a backlog of 10^4 messages spent most of its
  // sending here).
  if (!DETECTABLE.test(text)) return sortEntities([...entities]);
  const taken: Array<[number, number]> = [];
  for (const entity of entities) {
    if (OPAQUE_TYPES.has(entity.type)) taken.push([entity.offset, entity.offset + entity.length]);
  }
  const found: MessageEntity[] = [];
  for (const [type, pattern] of DETECTORS) {
    for (const match of text.matchAll(pattern)) {
      let value = match[0];
      if (type === "url") value = value.replace(/[.,;:!?)\]'"]+$/, "");
      const from = match.index ?? 0;
      const to = from + value.length;
      if (value.length === 0) continue;
      if (taken.some(([a, b]) => from < b && to > a)) continue;
      taken.push([from, to]);
      found.push({ type, offset: from, length: value.length } as MessageEntity);
    }
  }
  return sortEntities([...entities, ...found]);
}

/** What a send or edit call gave for the text (or caption). */
interface TextInput {
  readonly text: string;
  readonly parseMode: string | undefined;
  readonly entities: string | undefined;
}

/**
 * Applies parse_mode (or explicit entities), trims, detects entities. Throws Telegram's 400s:
 * "unsupported parse_mode" and "can't parse entities: …". Length checks are the caller's.
 */
export function formatText(input: TextInput): ParsedText {
  const mode = (input.parseMode ?? "").toLowerCase();
  let parsed: ParsedText;
  if (mode === "" || mode === "none") {
    parsed = { text: input.text, entities: parseExplicitEntities(input.entities) };
  } else {
    const parse =
      mode === "html"
        ? parseHtml
        : mode === "markdownv2"
          ? parseMarkdownV2
          : mode === "markdown"
            ? parseMarkdown
            : undefined;
    if (parse === undefined) throw badRequest("unsupported parse_mode");
    try {
      parsed = parse(input.text);
    } catch (error) {
      if (error instanceof EntityParseError) {
        throw badRequest(`can't parse entities: ${error.message}`);
      }
      throw error;
    }
  }
  const trimmed = trim(parsed);
  const inRange = trimmed.entities.filter(
    (entity) => entity.offset < trimmed.text.length && entity.length > 0,
  );
  const clipped = inRange.map((entity) =>
    entity.offset + entity.length > trimmed.text.length
      ? { ...entity, length: trimmed.text.length - entity.offset }
      : entity,
  );
  return { text: trimmed.text, entities: detectEntities(trimmed.text, clipped) };
}

// Reads an application/json body into Bot API parameters the way Telegram's server does: the
// body must be one object; string values are decoded, every other value is kept as its raw JSON
// text (so `reply_markup` may arrive as an object or as a JSON-serialised string alike).

import { badRequest } from "./api-failure.js";

const MAX_DEPTH = 100;

function isSpace(char: string | undefined): boolean {
  return char === " " || char === "\t" || char === "\n" || char === "\r";
}

function parseError(message: unknown): string {
  return message instanceof Error ? message.message : String(message);
}

class Cursor {
  pos = 0;
  constructor(readonly text: string) {}

  get done(): boolean {
    return this.pos >= this.text.length;
  }

  peek(): string | undefined {
    return this.text[this.pos];
  }

  skipSpaces(): void {
    while (isSpace(this.text[this.pos])) this.pos++;
  }

  /** Reads a JSON string starting at the current `"`, returning the decoded value. */
  readString(): string {
    const start = this.pos;
    if (this.text[this.pos] !== '"') throw new Error("expected '\"'");
    this.pos++;
    while (this.pos < this.text.length) {
      const char = this.text[this.pos];
      if (char === "\\") {
        this.pos += 2;
        continue;
      }
      this.pos++;
      if (char === '"') return JSON.parse(this.text.slice(start, this.pos)) as string;
    }
    throw new Error("unterminated string");
  }

  /** Skips one non-string JSON value, returning its raw text after validating it. */
  readRawValue(): string {
    const start = this.pos;
    let depth = 0;
    while (this.pos < this.text.length) {
      const char = this.text[this.pos] as string;
      if (char === '"') {
        this.readString();
        if (depth === 0) break;
        continue;
      }
      if (char === "{" || char === "[") {
        depth++;
        if (depth > MAX_DEPTH) throw new Error("too deep nesting");
      } else if (char === "}" || char === "]") {
        if (depth === 0) break;
        depth--;
        this.pos++;
        if (depth === 0) break;
        continue;
      } else if (depth === 0 && (char === "," || isSpace(char))) {
        break;
      }
      this.pos++;
    }
    const raw = this.text.slice(start, this.pos);
    if (raw.length === 0) throw new Error("value expected");
    JSON.parse(raw);
    return raw;
  }
}

/**
 * Parses a JSON body into `[name, value]` pairs. A top-level JSON string becomes the single
 * parameter `content`, as on the real server. Throws an {@link ApiFailure} 400 with Telegram's
 * wording for anything else that is not one object.
 */
export function parseJsonParameters(body: string): Array<[string, string]> {
  const cursor = new Cursor(body);
  cursor.skipSpaces();
  if (cursor.done) return [];
  if (cursor.peek() === '"') {
    let value: string;
    try {
      value = cursor.readString();
    } catch (error) {
      throw badRequest(`can't parse string content: ${parseError(error)}`);
    }
    cursor.skipSpaces();
    if (!cursor.done) throw badRequest("extra data after string");
    return [["content", value]];
  }
  if (cursor.peek() !== "{") throw badRequest("JSON object expected");
  cursor.pos++;
  const entries: Array<[string, string]> = [];
  while (true) {
    cursor.skipSpaces();
    if (cursor.peek() === "}") {
      cursor.pos++;
      cursor.skipSpaces();
      if (cursor.done) return entries;
      throw badRequest("unexpected data after object end");
    }
    if (cursor.done) throw badRequest("expected parameter name");
    let key: string;
    try {
      key = cursor.readString();
    } catch (error) {
      throw badRequest(`can't parse parameter name: ${parseError(error)}`);
    }
    cursor.skipSpaces();
    if (cursor.peek() !== ":") throw badRequest("can't parse object, ':' expected");
    cursor.pos++;
    cursor.skipSpaces();
    let value: string;
    try {
      value = cursor.peek() === '"' ? cursor.readString() : cursor.readRawValue();
    } catch (error) {
      throw badRequest(`can't parse parameter value: ${parseError(error)}`);
    }
    entries.push([key, value]);
    cursor.skipSpaces();
    if (cursor.peek() === ",") {
      cursor.pos++;
    } else if (cursor.peek() !== "}") {
      throw badRequest("expected next field or object end");
    }
  }
}

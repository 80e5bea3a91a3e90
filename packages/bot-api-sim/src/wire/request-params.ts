// The parameters of one Bot API call, read the way Telegram's server reads them: every value is
// text (JSON bodies keep non-string values as raw JSON), an empty value counts as absent, the
// first occurrence wins, and numbers and booleans are parsed leniently.

import { badRequest } from "./api-failure.js";

/** A file part of a multipart request. */
export interface UploadedFile {
  /** The form field the part was sent under. */
  readonly field: string;
  /** The part's `filename`, possibly empty. */
  readonly fileName: string;
  /** The part's `Content-Type`, `application/octet-stream` when absent. */
  readonly contentType: string;
  readonly bytes: Buffer;
}

/** Parses a leading optional `-` and digits like tdlib's `to_integer`: garbage reads as 0. */
function lenientInteger(text: string): number {
  const match = /^\s*(-?)(\d+)/.exec(text);
  if (match === null) return 0;
  const value = Number(`${match[1]}${match[2]}`);
  return Number.isFinite(value) ? value : 0;
}

/** Parses a whole string as a safe integer, or `undefined` (tdlib's `to_integer_safe`). */
export function strictInteger(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^-?\d{1,16}$/.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isSafeInteger(value) ? value : undefined;
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** The arguments of one call: query string first, then the body, then file parts. */
export class RequestParams {
  readonly #args: ReadonlyMap<string, string>;
  readonly #files: ReadonlyMap<string, UploadedFile>;

  constructor(args: Iterable<readonly [string, string]>, files: Iterable<UploadedFile> = []) {
    const map = new Map<string, string>();
    for (const [key, value] of args) {
      if (!map.has(key)) map.set(key, value);
    }
    this.#args = map;
    const fileMap = new Map<string, UploadedFile>();
    for (const file of files) {
      if (!fileMap.has(file.field)) fileMap.set(file.field, file);
    }
    this.#files = fileMap;
  }

  /** The raw text of a parameter; `undefined` when absent or empty (Telegram treats them alike). */
  get(name: string): string | undefined {
    const value = this.#args.get(name);
    return value === undefined || value.length === 0 ? undefined : value;
  }

  /** Whether the parameter was sent at all, even empty. */
  has(name: string): boolean {
    return this.#args.has(name);
  }

  /** The raw text, or `""` when absent. */
  text(name: string): string {
    return this.#args.get(name) ?? "";
  }

  /** A file part sent under this field name. */
  file(name: string): UploadedFile | undefined {
    return this.#files.get(name);
  }

  /** "true", "yes" and "1" in any case (trimmed) are true; anything else is false. */
  bool(name: string): boolean {
    const value = this.text(name).trim().toLowerCase();
    return value === "true" || value === "yes" || value === "1";
  }

  /** An int32 with a default when absent, clamped to [min, max]; garbage reads as 0. */
  int(name: string, defaultValue: number, min = INT32_MIN, max = INT32_MAX): number {
    const raw = this.get(name);
    if (raw === undefined) return defaultValue;
    const value = Math.max(INT32_MIN, Math.min(INT32_MAX, lenientInteger(raw)));
    return Math.max(min, Math.min(max, value));
  }

  /** A 64-bit integer read leniently: absent or garbage reads as 0. */
  long(name: string): number {
    const raw = this.get(name);
    return raw === undefined ? 0 : lenientInteger(raw);
  }

  /** A message id: absent, garbage or negative reads as 0 ("not specified"). */
  messageId(name = "message_id"): number {
    const value = this.int(name, 0);
    return Math.max(value, 0);
  }

  /** A required non-empty parameter, else 400 `parameter "name" is required`. */
  required(name: string): string {
    const value = this.get(name);
    if (value === undefined) throw badRequest(`parameter "${name}" is required`);
    return value;
  }

  /** Parses a parameter as JSON; `undefined` when absent, `{ error }` when malformed. */
  json(name: string): { readonly value: unknown } | { readonly error: string } | undefined {
    const raw = this.get(name);
    if (raw === undefined) return undefined;
    try {
      return { value: JSON.parse(raw) as unknown };
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  }
}

// Request bodies: JSON when no file is involved, multipart/form-data when one is. Files nested in
// parameters (InputMedia) are attached as `attach://<name>`. Streams are sent as they are read.

import { randomUUID } from "node:crypto";
import { InputFile, type OpenedFile } from "./input-file.js";

/** A request body ready for undici. */
export interface EncodedBody {
  readonly body: Uint8Array | AsyncIterable<Uint8Array>;
  readonly contentType: string;
  /** Known when every part has a known size. */
  readonly contentLength: number | undefined;
}

function escapeQuoted(value: string): string {
  return value.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** Whether `params` hold an {@link InputFile} anywhere. */
function hasFile(value: unknown, seen = new Set<unknown>()): boolean {
  if (value instanceof InputFile) return true;
  if (typeof value !== "object" || value === null || seen.has(value)) return false;
  seen.add(value);
  return Object.values(value).some((nested) => hasFile(nested, seen));
}

/** Replaces nested InputFiles with `attach://` references, collecting them. */
function attachNested(value: unknown, files: Map<string, InputFile>): unknown {
  if (value instanceof InputFile) {
    const name = `file${files.size}`;
    files.set(name, value);
    return `attach://${name}`;
  }
  if (Array.isArray(value)) return value.map((item) => attachNested(item, files));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, nested]) => [key, attachNested(nested, files)]),
    );
  }
  return value;
}

/**
 * Encodes Bot API parameters. Without files: a JSON body. With files: multipart, where strings are
 * sent as they are, numbers and booleans as text and objects as JSON (as the Bot API expects).
 */
export async function encodeParams(
  params: Record<string, unknown> | undefined,
): Promise<EncodedBody> {
  if (params === undefined || !hasFile(params)) {
    const body = Buffer.from(JSON.stringify(params ?? {}));
    return { body, contentType: "application/json", contentLength: body.byteLength };
  }
  const fields: [string, string][] = [];
  const files = new Map<string, InputFile>();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (value instanceof InputFile) files.set(key, value);
    else if (typeof value === "string") fields.push([key, value]);
    else if (typeof value === "object" && value !== null) {
      fields.push([key, JSON.stringify(attachNested(value, files))]);
    } else fields.push([key, String(value)]);
  }
  const opened: [string, OpenedFile][] = [];
  for (const [name, file] of files) opened.push([name, await file.open()]);

  const boundary = `----telepace${randomUUID().replace(/-/g, "")}`;
  const parts: (Uint8Array | OpenedFile)[] = [];
  for (const [name, value] of fields) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${escapeQuoted(name)}"\r\n\r\n${value}\r\n`,
      ),
    );
  }
  for (const [name, file] of opened) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${escapeQuoted(name)}"; filename="${escapeQuoted(file.filename)}"\r\nContent-Type: ${file.contentType}\r\n\r\n`,
      ),
      file,
      Buffer.from("\r\n"),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));

  let contentLength: number | undefined = 0;
  for (const part of parts) {
    const size = part instanceof Uint8Array ? part.byteLength : part.size;
    contentLength =
      size === undefined || contentLength === undefined ? undefined : contentLength + size;
  }
  const contentType = `multipart/form-data; boundary=${boundary}`;
  if (opened.every(([, file]) => file.chunks instanceof Uint8Array)) {
    const body = Buffer.concat(
      parts.map((part) => (part instanceof Uint8Array ? part : (part.chunks as Uint8Array))),
    );
    return { body, contentType, contentLength: body.byteLength };
  }
  return { body: stream(parts), contentType, contentLength };
}

async function* stream(parts: readonly (Uint8Array | OpenedFile)[]): AsyncIterable<Uint8Array> {
  for (const part of parts) {
    if (part instanceof Uint8Array) yield part;
    else if (part.chunks instanceof Uint8Array) yield part.chunks;
    else yield* part.chunks;
  }
}

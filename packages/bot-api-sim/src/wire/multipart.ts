// A multipart/form-data reader for Bot API uploads: text parts become parameters, parts with a
// filename become files. Errors carry the real server's wording.

import { ApiFailure, badRequest } from "./api-failure.js";
import type { UploadedFile } from "./request-params.js";

/** Longest boundary the real server accepts. */
const MAX_BOUNDARY_LENGTH = 70;
/** Total bytes of text parameters per request, as on the real server. */
export const MAX_PARAMETERS_BYTES = 1 << 20;
/** File parts per request. */
const MAX_FILES = 100;

const CRLF = Buffer.from("\r\n");
const HEADER_END = Buffer.from("\r\n\r\n");

/** The parsed parts of a multipart body. */
interface MultipartContent {
  readonly args: Array<[string, string]>;
  readonly files: UploadedFile[];
}

/** Extracts the boundary from a Content-Type value, or throws the real server's 400. */
function multipartBoundary(contentType: string): string {
  const lower = contentType.toLowerCase();
  const at = lower.indexOf("boundary");
  if (at < 0) throw badRequest("boundary not found");
  const equals = contentType.indexOf("=", at + "boundary".length);
  if (equals < 0) throw badRequest("boundary value not found");
  let end = contentType.indexOf(";", equals + 1);
  if (end < 0) end = contentType.length;
  let value = contentType.slice(equals + 1, end).trim();
  if (value.length > 1 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  if (value.length === 0 || value.length > MAX_BOUNDARY_LENGTH) {
    throw badRequest("boundary too big or empty");
  }
  return value;
}

interface PartHeaders {
  readonly name: string;
  readonly fileName: string | undefined;
  readonly contentType: string;
}

function parseDisposition(value: string): { name: string; fileName: string | undefined } {
  if (!value.startsWith("form-data;")) {
    throw badRequest("expected form-data content disposition");
  }
  let name = "";
  let fileName: string | undefined;
  for (const piece of value.slice("form-data;".length).split(";")) {
    const equals = piece.indexOf("=");
    if (equals < 0) continue;
    const key = piece.slice(0, equals).trim();
    let item = piece.slice(equals + 1).trim();
    if (item.length > 1 && item.startsWith('"') && item.endsWith('"')) item = item.slice(1, -1);
    if (key === "name") name = item;
    else if (key === "filename") fileName = item;
  }
  return { name, fileName };
}

function parsePartHeaders(text: string): PartHeaders {
  let name = "";
  let fileName: string | undefined;
  let contentType = "application/octet-stream";
  for (const line of text.split("\r\n")) {
    if (line.length === 0) continue;
    const colon = line.indexOf(":");
    if (colon < 0) throw badRequest("can't parse form data headers");
    const header = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (header === "content-disposition") {
      ({ name, fileName } = parseDisposition(value));
    } else if (header === "content-type") {
      contentType = value;
    }
  }
  if (name.length === 0) throw badRequest("field name in multipart/form-data not found");
  return { name, fileName, contentType };
}

/**
 * Splits a multipart body into parameters and files. A part whose own type is
 * application/x-www-form-urlencoded is read as more parameters, like the real server does.
 */
export function parseMultipart(body: Buffer, contentType: string): MultipartContent {
  const boundary = multipartBoundary(contentType);
  const delimiter = Buffer.from(`--${boundary}`);
  const partEnd = Buffer.from(`\r\n--${boundary}`);
  const args: Array<[string, string]> = [];
  const files: UploadedFile[] = [];
  let parameterBytes = 0;

  let pos = body.indexOf(delimiter);
  if (pos < 0) return { args, files };
  pos += delimiter.length;
  while (true) {
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) break; // "--" closes the body
    if (!body.subarray(pos, pos + 2).equals(CRLF)) {
      throw badRequest("can't parse form data headers");
    }
    const headerEnd = body.indexOf(HEADER_END, pos);
    if (headerEnd < 0) throw badRequest("can't parse form data headers");
    if (headerEnd === pos) throw badRequest("headers in multipart/form-data are empty");
    const headers = parsePartHeaders(body.subarray(pos + 2, headerEnd).toString("utf8"));
    const contentStart = headerEnd + HEADER_END.length;
    const contentEnd = body.indexOf(partEnd, contentStart);
    if (contentEnd < 0) throw badRequest("multipart/form-data part is not terminated");
    const content = body.subarray(contentStart, contentEnd);
    if (headers.fileName !== undefined) {
      if (files.length === MAX_FILES) {
        throw new ApiFailure(413, "Request Entity Too Large: too much files attached");
      }
      files.push({
        field: headers.name,
        fileName: headers.fileName,
        contentType: headers.contentType,
        bytes: Buffer.from(content),
      });
    } else {
      parameterBytes += content.length;
      if (parameterBytes > MAX_PARAMETERS_BYTES) {
        throw new ApiFailure(413, "Request Entity Too Large: too much parameters in form data");
      }
      const text = content.toString("utf8");
      if (headers.contentType.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
        for (const [key, value] of new URLSearchParams(text)) args.push([key, value]);
      } else {
        args.push([headers.name, text]);
      }
    }
    pos = contentEnd + partEnd.length;
  }
  return { args, files };
}

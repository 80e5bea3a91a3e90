// Reading a Bot API request: the body with a hard byte bound (also after gzip/deflate), then the
// four encodings Telegram accepts — query string, urlencoded, JSON and multipart — merged into
// one parameter list with the query string first.

import type { IncomingMessage } from "node:http";
import { promisify } from "node:util";
import { gunzip, inflate } from "node:zlib";
import { ApiFailure } from "./api-failure.js";
import { parseJsonParameters } from "./json-parameters.js";
import { MAX_PARAMETERS_BYTES, parseMultipart } from "./multipart.js";
import { RequestParams } from "./request-params.js";

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/** The client went away before its body arrived; there is nobody to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super("client closed the request");
    this.name = "ClientGoneError";
  }
}

function tooLarge(): ApiFailure {
  return new ApiFailure(413, "Request Entity Too Large");
}

/**
 * Reads the whole body, refusing (413) as soon as it would exceed `maxBytes`, and decodes a
 * gzip or deflate `Content-Encoding` within the same bound.
 */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > maxBytes) throw tooLarge();
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: Error | undefined, value?: Buffer): void => {
      if (settled) return;
      settled = true;
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
      if (error) reject(error);
      else resolve(value as Buffer);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        // Stop buffering; the connection is closed after the 413 goes out.
        req.pause();
        finish(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish(undefined, Buffer.concat(chunks, size));
    const onError = (): void => finish(new ClientGoneError());
    const onAborted = (): void => finish(new ClientGoneError());
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
  const encoding = (req.headers["content-encoding"] ?? "").trim().toLowerCase();
  if (encoding === "" || encoding === "identity" || raw.length === 0) return raw;
  if (encoding !== "gzip" && encoding !== "x-gzip" && encoding !== "deflate") {
    throw new ApiFailure(415, "Unsupported Media Type: unsupported content-encoding");
  }
  try {
    const decode = encoding === "deflate" ? inflateAsync : gunzipAsync;
    return await decode(raw, { maxOutputLength: maxBytes });
  } catch (error) {
    if (
      error instanceof RangeError ||
      (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE"
    ) {
      throw tooLarge();
    }
    throw new ApiFailure(400, `Bad Request: ${(error as Error).message}`);
  }
}

function urlencodedPairs(text: string): Array<[string, string]> {
  if (Buffer.byteLength(text) > MAX_PARAMETERS_BYTES) {
    throw new ApiFailure(413, "Request Entity Too Large: too much parameters");
  }
  return [...new URLSearchParams(text)];
}

/**
 * Builds the parameters of a call from its query string and body. A body of any other content
 * type is ignored, as on the real server, so the method reports what is missing.
 */
export function parseRequestParams(
  query: string,
  contentType: string | undefined,
  body: Buffer,
): RequestParams {
  const args = urlencodedPairs(query);
  const type = (contentType ?? "").toLowerCase();
  if (body.length === 0) return new RequestParams(args);
  if (type.includes("multipart/form-data")) {
    const content = parseMultipart(body, contentType ?? "");
    return new RequestParams([...args, ...content.args], content.files);
  }
  if (type.includes("application/x-www-form-urlencoded")) {
    return new RequestParams([...args, ...urlencodedPairs(body.toString("utf8"))]);
  }
  if (type.includes("application/json")) {
    if (body.length > MAX_PARAMETERS_BYTES) {
      throw new ApiFailure(413, "Request Entity Too Large: too much parameters");
    }
    return new RequestParams([...args, ...parseJsonParameters(body.toString("utf8"))]);
  }
  return new RequestParams(args);
}

// The Bot API envelope on the wire: `{ ok, result, description? }` or `{ ok: false, error_code,
// description, parameters? }` as JSON, with the headers Telegram adds to failures.

import type { ServerResponse } from "node:http";
import type { ApiFailure } from "./api-failure.js";

/** The JSON body of every Bot API answer. */
export interface Envelope {
  readonly ok: boolean;
  readonly result?: unknown;
  readonly description?: string;
  readonly error_code?: number;
  readonly parameters?: unknown;
}

/** Writes a JSON body unless the response is already gone. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | number> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

/** The envelope and headers of an ApiFailure. */
export function failureResponse(failure: ApiFailure): {
  body: Envelope;
  headers: Record<string, string | number>;
} {
  const body: Envelope = {
    ok: false,
    error_code: failure.errorCode,
    description: failure.description,
    ...(failure.parameters === undefined ? {} : { parameters: failure.parameters }),
  };
  const headers: Record<string, string | number> = {};
  if (failure.retryAfterHeader !== undefined) headers["Retry-After"] = failure.retryAfterHeader;
  // Telegram closes the connection after refusing an oversized body; so do we.
  if (failure.errorCode === 413) headers.Connection = "close";
  return { body, headers };
}

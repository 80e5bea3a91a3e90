// Test helpers: call a simulator over real HTTP (undici) in each encoding, and check its answers.

import { deflateSync } from "node:zlib";
import { Agent, type Dispatcher, FormData, request } from "undici";
import { expect } from "vitest";
import type { BotApiSim } from "../src/index.js";

/** A keep-alive pool shared by the tests of one file. */
export const agent = new Agent({ keepAliveTimeout: 1000, connections: 32 });

/** How a call sends its parameters. */
export type Encoding = "query" | "form" | "json" | "multipart";

/** An answer of the simulator. */
export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: envelopes are checked field by field in tests
  readonly body: any;
  readonly text: string;
}

/** A file part for multipart calls. */
export interface FilePart {
  readonly bytes: Uint8Array;
  readonly fileName: string;
  readonly contentType?: string;
}

async function toReply(response: Dispatcher.ResponseData): Promise<Reply> {
  const text = await response.body.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.statusCode, headers: response.headers, body, text };
}

function stringify(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Calls a Bot API method of `sim` over HTTP. */
export async function call(
  sim: BotApiSim,
  method: string,
  params: Record<string, unknown> = {},
  options: {
    readonly encoding?: Encoding;
    readonly token?: string;
    readonly files?: Record<string, FilePart>;
    readonly signal?: AbortSignal;
  } = {},
): Promise<Reply> {
  const encoding = options.encoding ?? (options.files === undefined ? "json" : "multipart");
  const base = `${sim.apiRoot}/bot${options.token ?? sim.token}/${method}`;
  const entries = Object.entries(params).filter(([, value]) => value !== undefined);
  let response: Dispatcher.ResponseData;
  if (encoding === "query") {
    const query = new URLSearchParams(
      entries.map(([key, value]): [string, string] => [key, stringify(value)]),
    );
    response = await request(`${base}?${query}`, { dispatcher: agent, signal: options.signal });
  } else if (encoding === "form") {
    const body = new URLSearchParams(
      entries.map(([key, value]): [string, string] => [key, stringify(value)]),
    ).toString();
    response = await request(base, {
      method: "POST",
      dispatcher: agent,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
      signal: options.signal,
    });
  } else if (encoding === "json") {
    response = await request(base, {
      method: "POST",
      dispatcher: agent,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(Object.fromEntries(entries)),
      signal: options.signal,
    });
  } else {
    const form = new FormData();
    for (const [key, value] of entries) form.append(key, stringify(value));
    for (const [key, file] of Object.entries(options.files ?? {})) {
      form.append(
        key,
        new Blob([file.bytes], { type: file.contentType ?? "application/octet-stream" }),
        file.fileName,
      );
    }
    response = await request(base, {
      method: "POST",
      dispatcher: agent,
      body: form,
      signal: options.signal,
    });
  }
  return toReply(response);
}

/** A raw request to any path of the simulator. */
export async function raw(
  sim: BotApiSim,
  path: string,
  init: {
    readonly method?: Dispatcher.HttpMethod;
    readonly headers?: Record<string, string>;
    readonly body?: string | Buffer;
  } = {},
): Promise<Reply> {
  const response = await request(`${sim.apiRoot}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    dispatcher: agent,
    ...(init.headers === undefined ? {} : { headers: init.headers }),
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  return toReply(response);
}

/** Calls the HTTP control API. */
export async function control(
  sim: BotApiSim,
  path: string,
  body?: Record<string, unknown>,
): Promise<Reply> {
  const response = await request(`${sim.controlRoot}${path}`, {
    method: body === undefined ? "GET" : "POST",
    dispatcher: agent,
    ...(body === undefined
      ? {}
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  return toReply(response);
}

/** A 1×1 PNG. */
export const PNG_1X1 = Buffer.from(
  "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201e2a7c3" +
    "b50000000049454e44ae426082",
  "hex",
);

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** A real RGB PNG of a sunset-like gradient, for pictures a browser must be able to show. */
export function gradientPng(width: number, height: number): Buffer {
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) {
      row[1 + x * 3] = 250 - Math.round((60 * y) / height);
      row[2 + x * 3] = 190 - Math.round((110 * y) / height);
      row[3 + x * 3] = 90 + Math.round((120 * y) / height);
    }
    rows.push(row);
  }
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.concat(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A PNG header claiming the given size (enough for dimension sniffing). */
export function pngOfSize(width: number, height: number): Buffer {
  const bytes = Buffer.from(PNG_1X1);
  bytes.writeUInt32BE(width, 16);
  bytes.writeUInt32BE(height, 20);
  return bytes;
}

/** Expects a flood-control answer: 429, the envelope with `retry_after`, the Retry-After header. */
export function expectTooManyRequests(reply: Reply, retryAfterS: number): void {
  expect(reply.status).toBe(429);
  expect(reply.body).toEqual({
    ok: false,
    error_code: 429,
    description: `Too Many Requests: retry after ${retryAfterS}`,
    parameters: { retry_after: retryAfterS },
  });
  expect(reply.headers["retry-after"]).toBe(String(retryAfterS));
}

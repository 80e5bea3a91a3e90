// The Bot API over HTTP: one undici keep-alive pool per client, per-request timeouts on the
// injected clock, typed errors that say whether a failed request may have reached Telegram, and
// the token scrubbed from everything that leaves this file.

import { Readable } from "node:stream";
import { abortReason, type Clock, onAbort } from "@telepace/core";
import { isConnectFailure, NetworkError, networkErrorCode, OutboxError } from "@telepace/outbox";
import { Pool } from "undici";
import { parseEnvelope, type ResponseHeaders } from "./envelope.js";
import { ClientError } from "./errors.js";
import { encodeParams } from "./multipart.js";
import { redactSecret } from "./redact.js";

/** Settings of {@link BotApiHttp}, already validated by the client. */
export interface BotApiHttpSettings {
  readonly apiRoot: URL;
  readonly token: string;
  readonly clock: Clock;
  readonly requestTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxResponseBytes: number;
}

/** Per-request options. */
export interface RequestOptions {
  /** Aborting cancels the request; the call rejects with `signal.reason`. */
  readonly signal?: AbortSignal | undefined;
  /** Overrides the client's `requestTimeoutMs` for this request. Range: >= 0. */
  readonly timeoutMs?: number | undefined;
}

/** Byte range of a download: `start` to `end`, both inclusive; `end` omitted means to the end. */
export interface ByteRange {
  readonly start: number;
  readonly end?: number | undefined;
}

/** A file download in progress. */
export interface FileDownload {
  /** 200 (whole file) or 206 (the requested range). */
  readonly statusCode: number;
  /**
   * True when the server honoured the range (206). A server may ignore `Range` and send the whole
   * file with 200: then the body starts at byte 0.
   */
  readonly isPartial: boolean;
  /** `Content-Length` of this response, when sent. */
  readonly contentLength: number | undefined;
  /** The parsed `Content-Range` of a 206. */
  readonly contentRange:
    | { readonly start: number; readonly end: number; readonly totalSize: number | undefined }
    | undefined;
  /** The bytes. Consume or destroy it; aborting the download's signal destroys it. */
  readonly body: Readable;
}

const TIMEOUT = Symbol("timeout");

/** Sends Bot API requests for one token; see the file comment. */
export class BotApiHttp {
  readonly #pool: Pool;
  readonly #basePath: string;
  readonly #token: string;
  readonly #clock: Clock;
  readonly #requestTimeoutMs: number;
  readonly #maxResponseBytes: number;

  constructor(settings: BotApiHttpSettings) {
    this.#pool = new Pool(settings.apiRoot.origin, { connections: settings.maxConnections });
    this.#basePath = settings.apiRoot.pathname.replace(/\/+$/, "");
    this.#token = settings.token;
    this.#clock = settings.clock;
    this.#requestTimeoutMs = settings.requestTimeoutMs;
    this.#maxResponseBytes = settings.maxResponseBytes;
  }

  /** Calls a method and returns its `result`, or throws a typed error. */
  async call(
    method: string,
    params: Record<string, unknown> | undefined,
    options: RequestOptions = {},
  ): Promise<unknown> {
    const encoded = await encodeParams(params);
    const headers: Record<string, string> = { "content-type": encoded.contentType };
    if (encoded.contentLength !== undefined)
      headers["content-length"] = String(encoded.contentLength);
    return this.#exchange(method, options, async (signal) => {
      const response = await this.#pool.request({
        path: `${this.#basePath}/bot${this.#token}/${method}`,
        method: "POST",
        headers,
        body: encoded.body instanceof Uint8Array ? encoded.body : Readable.from(encoded.body),
        signal,
      });
      const text = await this.#readText(method, response.body);
      return parseEnvelope(method, response.statusCode, response.headers as ResponseHeaders, text);
    });
  }

  /** Starts downloading `filePath` (from getFile); the timeout covers the wait for headers. */
  async download(
    filePath: string,
    range: ByteRange | undefined,
    options: RequestOptions = {},
  ): Promise<FileDownload> {
    const path = `${this.#basePath}/file/bot${this.#token}/${filePath
      .split("/")
      .map(encodeURIComponent)
      .join("/")}`;
    const headers: Record<string, string> = {};
    if (range !== undefined) headers.range = `bytes=${range.start}-${range.end ?? ""}`;
    let keepForwarding: (() => void) | undefined;
    const download = await this.#exchange("downloadFile", options, async (signal, forwarding) => {
      const response = await this.#pool.request({ path, method: "GET", headers, signal });
      if (response.statusCode !== 200 && response.statusCode !== 206) {
        const text = await this.#readText("downloadFile", response.body);
        parseEnvelope(
          "downloadFile",
          response.statusCode,
          response.headers as ResponseHeaders,
          text,
        );
      }
      // The caller's signal must keep reaching the body after this function returns.
      keepForwarding = forwarding.keep();
      return response;
    });
    const body = download.body as unknown as Readable;
    // Runs before the consumer's own error handlers, so they see a scrubbed error.
    body.on("error", (error) => redactSecret(error, this.#token));
    body.once("close", () => keepForwarding?.());
    const responseHeaders = download.headers as ResponseHeaders;
    const length = Number(responseHeaders["content-length"]);
    return {
      statusCode: download.statusCode,
      isPartial: download.statusCode === 206,
      contentLength: Number.isFinite(length) ? length : undefined,
      contentRange: parseContentRange(responseHeaders["content-range"]),
      body,
    };
  }

  /**
   * Closes the pool gracefully (requests in flight finish, new ones are refused), and destroys it
   * (failing what is still in flight) when that takes longer than `timeoutMs`.
   */
  async close(timeoutMs: number): Promise<void> {
    let timer: { cancel(): void } | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = this.#clock.setTimer(() => resolve(false), timeoutMs);
    });
    const inTime = await Promise.race([this.#pool.close().then(() => true), deadline]);
    timer?.cancel();
    if (!inTime) await this.#pool.destroy();
  }

  async #exchange<T>(
    method: string,
    options: RequestOptions,
    run: (signal: AbortSignal, forwarding: { keep(): () => void }) => Promise<T>,
  ): Promise<T> {
    const outer = options.signal;
    if (outer?.aborted) throw abortReason(outer);
    const timeoutMs = options.timeoutMs ?? this.#requestTimeoutMs;
    const controller = new AbortController();
    const unsubscribe = onAbort(outer, () => controller.abort(abortReason(outer as AbortSignal)));
    let kept = false;
    const forwarding = {
      keep: () => {
        kept = true;
        return unsubscribe;
      },
    };
    const timer = this.#clock.setTimer(() => controller.abort(TIMEOUT), timeoutMs);
    try {
      return await run(controller.signal, forwarding);
    } catch (error) {
      if (controller.signal.aborted) {
        if (controller.signal.reason === TIMEOUT) {
          throw new NetworkError(`${method}: no response within ${timeoutMs} ms`, {
            method,
            failure: "timeout",
            mayHaveReachedServer: true,
          });
        }
        throw controller.signal.reason;
      }
      if (error instanceof OutboxError || error instanceof ClientError) throw error;
      throw this.#networkError(method, error);
    } finally {
      timer.cancel();
      if (!kept) unsubscribe();
    }
  }

  #networkError(method: string, error: unknown): NetworkError {
    const cause = redactSecret(error, this.#token);
    const code = networkErrorCode(cause);
    const neverSent = isConnectFailure(cause);
    const detail = cause instanceof Error ? cause.message : String(cause);
    return new NetworkError(
      `${method}: ${neverSent ? "could not connect" : "connection lost"} (${code ?? "no code"}): ${detail}`,
      {
        method,
        failure: neverSent ? "connect" : "connection-lost",
        mayHaveReachedServer: !neverSent,
        cause,
      },
    );
  }

  async #readText(
    method: string,
    body: AsyncIterable<Uint8Array> & { destroy(): void },
  ): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.byteLength;
      if (size > this.#maxResponseBytes) {
        body.destroy();
        throw new NetworkError(
          `${method}: response larger than maxResponseBytes (${this.#maxResponseBytes})`,
          { method, failure: "bad-response", mayHaveReachedServer: true },
        );
      }
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks).toString("utf8");
  }
}

function parseContentRange(raw: string | string[] | undefined): FileDownload["contentRange"] {
  const value = Array.isArray(raw) ? raw[0] : raw;
  const match = value === undefined ? null : /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(value.trim());
  if (match === null) return undefined;
  const [, start, end, total] = match as unknown as [string, string, string, string];
  return {
    start: Number(start),
    end: Number(end),
    totalSize: total === "*" ? undefined : Number(total),
  };
}

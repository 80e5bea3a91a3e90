// The loopback HTTP server: routes /bot<token>/<method> to the method handlers, /file/bot<token>/
// to downloads and the control prefix to the control API, applies injected faults, and makes
// sure no request can crash or hang the process.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createDeferred, systemClock } from "@telepace/core";
import { publishFault, publishRequest } from "../diagnostics.js";
import { ApiSuccess, type MethodContext } from "../methods/bot-messages.js";
import { MAX_DOWNLOAD_BYTES } from "../methods/file-methods.js";
import { canonicalMethod } from "../methods/known-methods.js";
import { METHOD_HANDLERS } from "../methods/method-table.js";
import { ApiFailure } from "../wire/api-failure.js";
import type { FaultInjector, PlannedFault } from "../wire/faults.js";
import { ClientGoneError, parseRequestParams, readBody } from "../wire/request-body.js";
import { parseTokenBotId, redactTokens } from "../wire/token.js";
import type { BotRecord } from "../world/bot-record.js";
import type { SimWorld } from "../world/sim-world.js";

/** Path prefix of the control API. */
export const CONTROL_PREFIX = "/_sim";

/** Open connections at most, so a flood of clients cannot exhaust the process's sockets. */
const MAX_CONNECTIONS = 1024;

/** Handles one control API request. */
type ControlHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: string,
) => Promise<void>;

interface Envelope {
  readonly ok: boolean;
  readonly result?: unknown;
  readonly description?: string;
  readonly error_code?: number;
  readonly parameters?: unknown;
}

function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
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

interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * A single `bytes=` range against a size: the range, "unsatisfiable", or `undefined` when the
 * header is absent, malformed or asks for several ranges (then the whole file is sent).
 */
function parseRange(
  header: string | undefined,
  size: number,
): ByteRange | "unsatisfiable" | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (match === null) return undefined;
  const [, first, last] = match as unknown as [string, string, string];
  if (first === "" && last === "") return undefined;
  if (first === "") {
    const suffix = Number(last);
    if (suffix === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size) return "unsatisfiable";
  if (end < start) return undefined;
  return { start, end };
}

/** The HTTP side of the simulator. */
export class SimHttpServer {
  readonly #server: Server;
  readonly #world: SimWorld;
  readonly #faults: FaultInjector;
  readonly #control: ControlHandler;
  readonly #inFlight = new Set<AbortController>();
  readonly #sockets = new Set<Socket>();
  #idle = createDeferred<void>();

  constructor(world: SimWorld, faults: FaultInjector, control: ControlHandler) {
    this.#world = world;
    this.#faults = faults;
    this.#control = control;
    this.#idle.resolve();
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => this.#internalError(res, error));
    });
    this.#server.maxConnections = MAX_CONNECTIONS;
    this.#server.on("connection", (socket: Socket) => {
      this.#sockets.add(socket);
      socket.on("close", () => this.#sockets.delete(socket));
    });
    this.#server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      const status =
        error.code === "HPE_HEADER_OVERFLOW"
          ? "431 Request Header Fields Too Large"
          : "400 Bad Request";
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    });
  }

  /** Starts listening; resolves with the bound port. */
  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      this.#server.once("error", onError);
      this.#server.listen(port, host, () => {
        this.#server.off("error", onError);
        resolve((this.#server.address() as AddressInfo).port);
      });
    });
  }

  /**
   * Stops accepting connections, lets in-flight requests finish for up to `deadlineMs` of real
   * time (long polls are answered first by the caller), then cuts what is left.
   */
  async close(deadlineMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeIdleConnections();
    // Shutdown is bounded in real time whatever clock drives the simulation.
    const stop = new AbortController();
    const deadline = systemClock.sleep(deadlineMs, { signal: stop.signal }).catch(() => {});
    await Promise.race([this.#idle.promise, deadline]);
    for (const controller of this.#inFlight) controller.abort();
    // One turn for aborted handlers to drop their responses before the sockets go.
    await systemClock.sleep(0);
    for (const socket of this.#sockets) socket.destroy();
    stop.abort();
    await closed;
  }

  #track(): AbortController {
    const controller = new AbortController();
    if (this.#inFlight.size === 0) this.#idle = createDeferred<void>();
    this.#inFlight.add(controller);
    return controller;
  }

  #untrack(controller: AbortController): void {
    this.#inFlight.delete(controller);
    if (this.#inFlight.size === 0) this.#idle.resolve();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? "/";
    const question = url.indexOf("?");
    const rawPath = question < 0 ? url : url.slice(0, question);
    const query = question < 0 ? "" : url.slice(question + 1);
    const path = decodePath(rawPath);
    const controller = this.#track();
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
      this.#untrack(controller);
    });
    if (this.#world.isClosed) {
      req.resume();
      this.#world.counters.response(503);
      sendJson(
        res,
        503,
        {
          ok: false,
          error_code: 503,
          description: "Service Unavailable: the simulator is shutting down",
        },
        { Connection: "close" },
      );
      return;
    }
    if (path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`)) {
      await this.#control(req, res, path.slice(CONTROL_PREFIX.length), query);
      return;
    }
    if (path.startsWith("/file/bot")) {
      await this.#download(req, res, path.slice("/file/bot".length), controller.signal);
      return;
    }
    if (path.startsWith("/bot")) {
      await this.#botApi(req, res, path.slice("/bot".length), query, controller.signal);
      return;
    }
    this.#world.counters.add("requests");
    this.#respond(res, new ApiFailure(404, "Not Found"));
  }

  #respond(res: ServerResponse, outcome: unknown): number {
    if (outcome instanceof ApiFailure) {
      const { body, headers } = failureResponse(outcome);
      this.#world.counters.response(outcome.errorCode);
      sendJson(res, outcome.errorCode, body, headers);
      return outcome.errorCode;
    }
    const body: Envelope =
      outcome instanceof ApiSuccess
        ? outcome.description === undefined
          ? { ok: true, result: outcome.result }
          : { ok: true, result: outcome.result, description: outcome.description }
        : { ok: true, result: outcome };
    this.#world.counters.response(200);
    sendJson(res, 200, body);
    return 200;
  }

  /** Resolves the token of a `/bot…` or `/file/bot…` path, or answers 401 and returns undefined. */
  #authenticate(res: ServerResponse, token: string): BotRecord | undefined {
    if (parseTokenBotId(token) === undefined) {
      this.#respond(res, new ApiFailure(401, "Unauthorized: invalid token specified"));
      return undefined;
    }
    const bot = this.#world.botByToken(token);
    if (bot === undefined) this.#respond(res, new ApiFailure(401, "Unauthorized"));
    return bot;
  }

  async #botApi(
    req: IncomingMessage,
    res: ServerResponse,
    rest: string,
    query: string,
    signal: AbortSignal,
  ): Promise<void> {
    const world = this.#world;
    world.counters.add("requests");
    const started = world.now();
    if (req.method !== "GET" && req.method !== "POST") {
      req.resume();
      this.#respond(res, new ApiFailure(501, "Not Implemented"));
      return;
    }
    const slash = rest.indexOf("/");
    const token = slash < 0 ? rest : rest.slice(0, slash);
    const bot = this.#authenticate(res, token);
    if (bot === undefined) {
      req.resume();
      return;
    }
    let methodName = slash < 0 ? "" : rest.slice(slash + 1);
    let status: number | undefined;
    let canonical: string | undefined;
    try {
      const body = await readBody(req, world.options.maxRequestBytes);
      const params = parseRequestParams(query, req.headers["content-type"], body);
      if (methodName.length === 0) methodName = params.get("method") ?? "";
      const method = canonicalMethod(methodName);
      canonical = method;
      world.counters.call(method ?? "<unknown>");
      if (method === undefined) {
        status = this.#respond(res, new ApiFailure(404, "Not Found: method not found"));
        return;
      }
      const handler = METHOD_HANDLERS.get(method);
      if (handler === undefined) {
        status = this.#respond(
          res,
          new ApiFailure(
            400,
            `Bad Request: method ${method} is not implemented by the simulator (@telepace/bot-api-sim)`,
          ),
        );
        return;
      }
      const latency = this.#faults.latencyFor(method);
      if (latency > 0) await world.options.clock.sleep(latency, { signal });
      const fault = this.#faults.take(method);
      if (fault !== undefined && !fault.afterProcessing) {
        status = this.#injectApiFault(req, res, method, fault);
        return;
      }
      const ctx: MethodContext = { world, bot, params, method, signal };
      let outcome: unknown;
      try {
        outcome = await handler(ctx);
      } catch (error) {
        if (!(error instanceof ApiFailure)) throw error;
        outcome = error;
      }
      if (fault !== undefined) {
        status = this.#injectApiFault(req, res, method, fault);
        return;
      }
      status = this.#respond(res, outcome);
    } catch (error) {
      if (error instanceof ClientGoneError || signal.aborted) {
        res.destroy();
        return;
      }
      if (error instanceof ApiFailure) {
        status = this.#respond(res, error);
        return;
      }
      throw error;
    } finally {
      if (status !== undefined) {
        const durationMs = world.now() - started;
        publishRequest({ botId: bot.id, method: canonical ?? "<unknown>", status, durationMs });
        world.options.logger?.debug(
          { botId: bot.id, method: canonical ?? "<unknown>", status, durationMs },
          "bot-api-sim: request",
        );
      }
    }
  }

  #injectApiFault(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    fault: PlannedFault,
  ): number | undefined {
    this.#world.counters.add("faultsInjected");
    publishFault({
      method,
      fault: fault.kind === "fail" && fault.random ? "random-error" : fault.kind,
    });
    this.#world.options.logger?.info({ method, fault: fault.kind }, "bot-api-sim: fault injected");
    if (fault.kind === "reset") {
      req.socket.destroy();
      return undefined;
    }
    if (fault.kind === "malformed") {
      const payload = '{"ok":true,"result":{"message_id":';
      this.#world.counters.response(200);
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": payload.length });
      res.end(payload);
      return 200;
    }
    const failure = new ApiFailure(
      fault.code,
      fault.description,
      fault.retryAfter === undefined ? undefined : { retry_after: fault.retryAfter },
    );
    return this.#respond(res, failure);
  }

  async #download(
    req: IncomingMessage,
    res: ServerResponse,
    rest: string,
    signal: AbortSignal,
  ): Promise<void> {
    const world = this.#world;
    world.counters.add("requests");
    req.resume();
    if (req.method !== "GET" && req.method !== "HEAD") {
      this.#respond(res, new ApiFailure(501, "Not Implemented"));
      return;
    }
    const slash = rest.indexOf("/");
    const bot = this.#authenticate(res, slash < 0 ? rest : rest.slice(0, slash));
    if (bot === undefined) return;
    const file = slash < 0 ? undefined : world.files.byPath(rest.slice(slash + 1));
    if (file === undefined || file.bytes.length > MAX_DOWNLOAD_BYTES) {
      this.#respond(res, new ApiFailure(404, "Not Found"));
      return;
    }
    const latency = this.#faults.latencyFor("download");
    if (latency > 0) {
      try {
        await world.options.clock.sleep(latency, { signal });
      } catch {
        res.destroy();
        return;
      }
    }
    const fault = this.#faults.take("download");
    if (fault !== undefined) {
      world.counters.add("faultsInjected");
      publishFault({ method: "download", fault: fault.kind });
    }
    if (fault?.kind === "fail") {
      this.#respond(
        res,
        new ApiFailure(
          fault.code,
          fault.description,
          fault.retryAfter === undefined ? undefined : { retry_after: fault.retryAfter },
        ),
      );
      return;
    }
    if (fault?.kind === "reset" && !fault.afterProcessing) {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === "malformed") {
      const page =
        "<html><head><title>502 Bad Gateway</title></head><body>502 Bad Gateway</body></html>";
      world.counters.response(200);
      res.writeHead(200, { "Content-Type": "text/html", "Content-Length": page.length });
      res.end(page);
      return;
    }
    const size = file.bytes.length;
    const range = world.rangeRequests ? parseRange(req.headers.range, size) : undefined;
    const headers: Record<string, string | number> = { "Content-Type": "application/octet-stream" };
    if (world.rangeRequests) headers["Accept-Ranges"] = "bytes";
    if (range === "unsatisfiable") {
      world.counters.response(416);
      res.writeHead(416, { ...headers, "Content-Range": `bytes */${size}`, "Content-Length": 0 });
      res.end();
      return;
    }
    const start = range?.start ?? 0;
    const end = range?.end ?? size - 1;
    const body = file.bytes.subarray(start, end + 1);
    const status = range === undefined ? 200 : 206;
    if (range !== undefined) headers["Content-Range"] = `bytes ${start}-${end}/${size}`;
    headers["Content-Length"] = body.length;
    world.counters.response(status);
    res.writeHead(status, headers);
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    if (fault?.kind === "reset") {
      // Cut the body half-way, as a dropped connection during a transfer would.
      const half = body.subarray(0, Math.floor(body.length / 2));
      res.write(half, () => req.socket.destroy());
      world.counters.add("bytesServed", half.length);
      return;
    }
    res.end(body);
    world.counters.add("bytesServed", body.length);
  }

  #internalError(res: ServerResponse, error: unknown): void {
    const tokens = this.#world.bots.map((bot) => bot.token);
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    this.#world.options.logger?.error(
      { error: redactTokens(text, tokens) },
      "bot-api-sim: internal error while handling a request",
    );
    this.#world.counters.response(500);
    sendJson(res, 500, { ok: false, error_code: 500, description: "Internal Server Error" });
  }
}

// The loopback HTTP server: routes /bot<token>/<method> to the Bot API route, /file/bot<token>/
// to downloads, the control prefix to the control API and `/` to the chat page, tracks in-flight
// requests for a bounded close, and makes sure no request can crash or hang the process.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createDeferred, systemClock } from "@telepace/core";
import { ApiFailure } from "../wire/api-failure.js";
import { sendJson } from "../wire/envelope.js";
import type { FaultInjector } from "../wire/faults.js";
import { redactTokens } from "../wire/token.js";
import type { SimWorld } from "../world/sim-world.js";
import { serveBotApi } from "./bot-api-route.js";
import { Connections } from "./connections.js";
import { serveDownload } from "./file-download.js";
import { respond } from "./respond.js";

/** Path prefix of the control API. */
export const CONTROL_PREFIX = "/_sim";

/** Handles one control API request; `path` is relative to {@link CONTROL_PREFIX}. */
export type ControlHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: string,
) => Promise<void>;

/** The chat page's files, under the control prefix. */
export const ASSETS_PREFIX = `${CONTROL_PREFIX}/assets/`;
/** The chat page's event stream. */
export const EVENTS_PATH = `${CONTROL_PREFIX}/events`;
/** Stored files by file_id, for the page (which has no token for the download route). */
export const DOWNLOADS_PREFIX = `${CONTROL_PREFIX}/downloads/`;

/** Serves one request for a path of the chat page. */
export type PageHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
) => Promise<void>;

/** Whether a path belongs to the chat page rather than to the Bot API or the control API. */
function isPagePath(path: string): boolean {
  return (
    path === "/" ||
    path === EVENTS_PATH ||
    path.startsWith(ASSETS_PREFIX) ||
    path.startsWith(DOWNLOADS_PREFIX)
  );
}

const LOOPBACK_NAMES = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Whether a browser sent this request on behalf of another site: an `Origin` other than the
 * server's own, or (on loopback) a `Host` that is not a loopback name, as a DNS-rebound site's
 * would be. The page and the control API have no authentication, so such requests are refused.
 */
function isForeign(req: IncomingMessage, isLoopback: boolean): boolean {
  const host = req.headers.host ?? "";
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${host}`) return true;
  if (!isLoopback) return false;
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0];
  return !LOOPBACK_NAMES.has(name ?? "");
}

function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** The HTTP side of the simulator. */
export class SimHttpServer {
  readonly #server: Server;
  readonly #world: SimWorld;
  readonly #faults: FaultInjector;
  #control: ControlHandler | undefined;
  #page: PageHandler | undefined;
  readonly #inFlight = new Set<AbortController>();
  readonly #connections: Connections;
  #idle = createDeferred<void>();

  constructor(world: SimWorld, faults: FaultInjector) {
    this.#world = world;
    this.#faults = faults;
    this.#idle.resolve();
    const { headersTimeoutMs, maxConnections } = world.options;
    this.#connections = new Connections(maxConnections);
    this.#server = createServer(
      {
        // Node checks these bounds on a timer; a tenth of the bound keeps the cut close to it.
        headersTimeout: headersTimeoutMs,
        connectionsCheckingInterval: Math.max(5, Math.min(1000, Math.floor(headersTimeoutMs / 10))),
      },
      (req, res) => {
        this.#connections.begin(req.socket);
        res.once("close", () => this.#connections.end(req.socket));
        this.#handle(req, res).catch((error: unknown) => this.#internalError(res, error));
      },
    );
    this.#server.on("connection", (socket: Socket) => {
      if (this.#connections.admit(socket) !== "admitted") world.counters.add("connectionsShed");
    });
    this.#server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
      const timedOut = error.code === "ERR_HTTP_REQUEST_TIMEOUT";
      if (timedOut) world.counters.add("headersTimedOut");
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      const status = timedOut
        ? "408 Request Timeout"
        : error.code === "HPE_HEADER_OVERFLOW"
          ? "431 Request Header Fields Too Large"
          : "400 Bad Request";
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    });
  }

  /**
   * Serves the control API from now on. The composition root mounts it once the simulator
   * handle exists, before start() resolves; until then the prefix answers 503.
   */
  mountControl(handler: ControlHandler): void {
    this.#control = handler;
  }

  /** Serves the chat page from now on (mounted like the control API; 503 until then). */
  mountPage(handler: PageHandler): void {
    this.#page = handler;
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
    this.#connections.destroyAll();
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
    const isPage = isPagePath(path);
    const isControl = !isPage && (path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`));
    if ((isPage || isControl) && isForeign(req, this.#world.options.isLoopback)) {
      req.resume();
      sendJson(res, 403, {
        ok: false,
        error_code: 403,
        description: "Forbidden: a request on behalf of another site",
      });
      return;
    }
    if (
      this.#world.isClosed ||
      (isControl && this.#control === undefined) ||
      (isPage && this.#page === undefined)
    ) {
      req.resume();
      this.#world.counters.response(503);
      const why = this.#world.isClosed ? "shutting down" : "starting";
      sendJson(
        res,
        503,
        {
          ok: false,
          error_code: 503,
          description: `Service Unavailable: the simulator is ${why}`,
        },
        { Connection: "close" },
      );
      return;
    }
    if (isPage) {
      await this.#page?.(req, res, path);
      return;
    }
    if (isControl) {
      await this.#control?.(req, res, path.slice(CONTROL_PREFIX.length), query);
      return;
    }
    if (path.startsWith("/file/bot")) {
      await serveDownload(
        this.#world,
        this.#faults,
        req,
        res,
        path.slice("/file/bot".length),
        controller.signal,
      );
      return;
    }
    if (path.startsWith("/bot")) {
      await serveBotApi(
        this.#world,
        this.#faults,
        req,
        res,
        path.slice("/bot".length),
        query,
        controller.signal,
      );
      return;
    }
    this.#world.counters.add("requests");
    respond(this.#world, res, new ApiFailure(404, "Not Found"));
  }

  #internalError(res: ServerResponse, error: unknown): void {
    const tokens = this.#world.bots.map((bot) => bot.token);
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    this.#world.log(
      "error",
      { error: redactTokens(text, tokens) },
      "bot-api-sim: internal error while handling a request",
    );
    this.#world.counters.response(500);
    sendJson(res, 500, { ok: false, error_code: 500, description: "Internal Server Error" });
  }
}

// The chat page's HTTP side: the page at `/`, its files under /_sim/assets/, the event stream at
// /_sim/events and the bytes of stored files under /_sim/downloads/<file_id> (the page has no token,
// so it cannot use the Bot API's download route).

import type { IncomingMessage, ServerResponse } from "node:http";
import {
  ASSETS_PREFIX,
  DOWNLOADS_PREFIX,
  EVENTS_PATH,
  type PageHandler,
} from "../server/http-server.js";
import { sendJson } from "../wire/envelope.js";
import { guessMimeType } from "../world/file-store.js";
import type { SimWorld } from "../world/sim-world.js";
import { EventStreams } from "./event-stream.js";
import { PAGE_HEADERS, pageAssets } from "./page-assets.js";

function notFound(res: ServerResponse): void {
  sendJson(res, 404, { ok: false, error_code: 404, description: "Not Found" });
}

/** Serves the page's paths of one simulator. */
export function createPageHandler(world: SimWorld): PageHandler {
  const streams = new EventStreams(world);
  return async (req, res, path) => {
    // The event stream is GET only; a HEAD of it would hold a connection open for nothing.
    if (req.method !== "GET" && (req.method !== "HEAD" || path === EVENTS_PATH)) {
      req.resume();
      sendJson(res, 405, { ok: false, error_code: 405, description: "Method Not Allowed" });
      return;
    }
    if (path === EVENTS_PATH) {
      streams.open(req, res);
      return;
    }
    req.resume();
    if (path.startsWith(DOWNLOADS_PREFIX)) {
      serveFile(world, req, res, path.slice(DOWNLOADS_PREFIX.length));
      return;
    }
    const asset = pageAssets().get(path === "/" ? "index.html" : path.slice(ASSETS_PREFIX.length));
    if (asset === undefined) {
      notFound(res);
      return;
    }
    res.writeHead(200, {
      ...PAGE_HEADERS,
      "Content-Type": asset.contentType,
      "Content-Length": asset.body.length,
    });
    res.end(req.method === "HEAD" ? undefined : asset.body);
  };
}

/**
 * A stored file for the page: photos inline (their bytes were checked to be an image), documents
 * always as an octet-stream attachment, so an uploaded HTML page can never run as the page's own.
 */
function serveFile(world: SimWorld, req: IncomingMessage, res: ServerResponse, id: string): void {
  const file = world.files.byId(id);
  if (file === undefined) {
    notFound(res);
    return;
  }
  const isPhoto = file.kind === "photo";
  const name = file.fileName ?? file.filePath.slice(file.filePath.lastIndexOf("/") + 1);
  res.writeHead(200, {
    "Content-Type": isPhoto
      ? (guessMimeType(file.filePath, undefined) ?? "application/octet-stream")
      : "application/octet-stream",
    "Content-Length": file.bytes.length,
    "Content-Disposition": `${isPhoto ? "inline" : "attachment"}; filename*=UTF-8''${encodeURIComponent(name)}`,
    "Content-Security-Policy": "sandbox; default-src 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
  });
  res.end(req.method === "HEAD" ? undefined : file.bytes);
}

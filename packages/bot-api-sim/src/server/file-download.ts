// The file route, `/file/bot<token>/<file_path>`: downloads of stored files with optional
// single-range support, and the faults a transfer can meet (errors, cut bodies, HTML pages).

import type { IncomingMessage, ServerResponse } from "node:http";
import { publish } from "../diagnostics.js";
import { MAX_DOWNLOAD_BYTES } from "../methods/file-methods.js";
import { ApiFailure } from "../wire/api-failure.js";
import type { FaultInjector } from "../wire/faults.js";
import type { SimWorld } from "../world/sim-world.js";
import { authenticate, respond } from "./respond.js";

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

/** Answers `/file/bot<token>/<file_path>`: whole files, one `Range`, HEAD, and download faults. */
export async function serveDownload(
  world: SimWorld,
  faults: FaultInjector,
  req: IncomingMessage,
  res: ServerResponse,
  rest: string,
  signal: AbortSignal,
): Promise<void> {
  world.counters.add("requests");
  req.resume();
  if (req.method !== "GET" && req.method !== "HEAD") {
    respond(world, res, new ApiFailure(501, "Not Implemented"));
    return;
  }
  const slash = rest.indexOf("/");
  const bot = authenticate(world, res, slash < 0 ? rest : rest.slice(0, slash));
  if (bot === undefined) return;
  const file = slash < 0 ? undefined : world.files.byPath(rest.slice(slash + 1));
  if (file === undefined || file.bytes.length > MAX_DOWNLOAD_BYTES) {
    respond(world, res, new ApiFailure(404, "Not Found"));
    return;
  }
  const latency = faults.latencyFor("download");
  if (latency > 0) {
    try {
      await world.options.clock.sleep(latency, { signal });
    } catch {
      res.destroy();
      return;
    }
  }
  const fault = faults.take("download");
  if (fault !== undefined) {
    world.counters.add("faultsInjected");
    publish("fault", () => ({ type: "fault", method: "download", fault: fault.kind }));
    world.log("info", { method: "download", fault: fault.kind }, "bot-api-sim: fault injected");
    world.events.emit({ type: "fault", method: "download", fault: fault.kind });
  }
  if (fault?.kind === "fail") {
    respond(
      world,
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

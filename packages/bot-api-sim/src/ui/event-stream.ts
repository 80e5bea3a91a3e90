// The chat page's live channel: server-sent events of every change in the world, so the page
// follows the bot without reloading. Bounded twice: a few streams at once, and a write buffer per
// stream; a client that falls that far behind is cut, reconnects and reloads what it shows.

import type { IncomingMessage, ServerResponse } from "node:http";
import { sendJson } from "../wire/envelope.js";
import type { SimWorld } from "../world/sim-world.js";
import type { WorldEvent } from "../world/world-events.js";
import { pageEvent } from "./page-json.js";

/** Event streams open at once; another one is answered 503. */
export const MAX_EVENT_STREAMS = 16;
/** Bytes a stream may have waiting to be written before it is cut. */
export const MAX_STREAM_BUFFER_BYTES = 1024 * 1024;
/** How long a cut or dropped client waits before it reconnects, in ms (sent as `retry`). */
const RECONNECT_MS = 1000;

/** The open event streams of one simulator. */
export class EventStreams {
  readonly #world: SimWorld;
  readonly #clients = new Set<ServerResponse>();
  #unsubscribe: (() => void) | undefined;

  constructor(world: SimWorld) {
    this.#world = world;
  }

  /** Answers `GET /_sim/events`: the stream stays open until the client or the simulator goes. */
  open(req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    if (this.#world.isClosed || this.#clients.size >= MAX_EVENT_STREAMS) {
      const why = this.#world.isClosed
        ? "the simulator is shutting down"
        : `${MAX_EVENT_STREAMS} event streams are open already`;
      sendJson(res, 503, {
        ok: false,
        error_code: 503,
        description: `Service Unavailable: ${why}`,
      });
      return;
    }
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache",
      "X-Content-Type-Options": "nosniff",
    });
    res.write(`retry: ${RECONNECT_MS}\n\n`);
    res.write(frame("hello", { nowMs: this.#world.now() }));
    this.#clients.add(res);
    this.#unsubscribe ??= this.#world.events.subscribe((event) => this.#broadcast(event));
    res.once("close", () => {
      this.#clients.delete(res);
      if (this.#clients.size === 0) {
        this.#unsubscribe?.();
        this.#unsubscribe = undefined;
      }
    });
  }

  #broadcast(event: WorldEvent): void {
    if (event.type === "closed") {
      for (const res of this.#clients) res.end();
      return;
    }
    const { name, data } = pageEvent(this.#world, event);
    const text = frame(name, data);
    const bytes = Buffer.byteLength(text);
    for (const res of this.#clients) {
      if (res.writableLength + bytes > MAX_STREAM_BUFFER_BYTES) {
        // Buffering on would let one stalled tab hold the simulator's memory; cut it instead.
        this.#world.counters.add("eventStreamsCut");
        this.#clients.delete(res);
        res.destroy();
        continue;
      }
      res.write(text);
    }
  }
}

/** One server-sent event; JSON holds no raw newline, so `data` is a single line. */
function frame(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

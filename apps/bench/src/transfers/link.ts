// A shared link of fixed bandwidth between the downloading client and the sim: a loopback TCP
// proxy that splits `bytesPerSecond` evenly between connections with data waiting.

import net from "node:net";

/** Options of {@link ShapedLink}. */
export interface ShapedLinkOptions {
  /** The server behind the link. */
  readonly targetPort: number;
  readonly targetHost?: string;
  /** Downstream bandwidth shared by every connection, bytes per second. */
  readonly bytesPerSecond: number;
  /** How often bytes are released, ms. Smaller is smoother and costs more CPU. @defaultValue 2 */
  readonly tickMs?: number;
}

/** Bytes buffered per connection before the upstream socket is paused. */
const HIGH_WATER_BYTES = 256 * 1024;
/** The longest stretch of unused bandwidth carried over, ms (a stalled timer bursts no more). */
const MAX_CARRY_MS = 10;

class Flow {
  readonly chunks: Buffer[] = [];
  queuedBytes = 0;
  isPaused = false;

  constructor(
    readonly client: net.Socket,
    readonly upstream: net.Socket,
  ) {}

  /** Takes up to `limit` bytes from the front of the queue. */
  take(limit: number): Buffer {
    const parts: Buffer[] = [];
    let taken = 0;
    while (taken < limit && this.chunks.length > 0) {
      const head = this.chunks[0] as Buffer;
      const want = limit - taken;
      if (head.length <= want) {
        parts.push(head);
        taken += head.length;
        this.chunks.shift();
      } else {
        parts.push(head.subarray(0, want));
        this.chunks[0] = head.subarray(want);
        taken += want;
      }
    }
    this.queuedBytes -= taken;
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, taken);
  }
}

/**
 * The proxy. `listen()` it, point clients at its port, `close()` it when done. Loopback alone
 * serves everything at memory speed: without a shared bottleneck no scheduler could matter.
 */
export class ShapedLink {
  readonly #options: Required<ShapedLinkOptions>;
  readonly #flows = new Set<Flow>();
  readonly #server: net.Server;
  #timer: NodeJS.Timeout | undefined;
  #lastTick = 0;
  #credit = 0;
  #forwarded = 0;

  constructor(options: ShapedLinkOptions) {
    if (!(options.bytesPerSecond > 0)) {
      throw new RangeError(
        `Expected \`bytesPerSecond\` to be > 0, got ${String(options.bytesPerSecond)}`,
      );
    }
    this.#options = { targetHost: "127.0.0.1", tickMs: 2, ...options };
    this.#server = net.createServer((client) => this.#connect(client));
  }

  /** Bytes delivered to clients so far. */
  get forwardedBytes(): number {
    return this.#forwarded;
  }

  /** Starts listening on a free loopback port; resolves with the port. */
  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(0, "127.0.0.1", () => resolve());
    });
    this.#lastTick = performance.now();
    this.#timer = setInterval(() => this.#tick(), this.#options.tickMs);
    return (this.#server.address() as net.AddressInfo).port;
  }

  /** Stops accepting, cuts every connection and stops the clock. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    for (const flow of this.#flows) {
      flow.client.destroy();
      flow.upstream.destroy();
    }
    this.#flows.clear();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #connect(client: net.Socket): void {
    client.setNoDelay(true);
    const upstream = net.connect(this.#options.targetPort, this.#options.targetHost);
    upstream.setNoDelay(true);
    const flow = new Flow(client, upstream);
    this.#flows.add(flow);
    // Requests are small and go upstream unshaped; only responses cross the bottleneck.
    client.pipe(upstream);
    upstream.on("data", (chunk: Buffer) => {
      flow.chunks.push(chunk);
      flow.queuedBytes += chunk.length;
      if (flow.queuedBytes >= HIGH_WATER_BYTES && !flow.isPaused) {
        flow.isPaused = true;
        upstream.pause();
      }
    });
    const finish = (): void => {
      if (!this.#flows.delete(flow)) return;
      client.destroy();
      upstream.destroy();
    };
    upstream.on("end", () => {
      // Deliver what is queued before closing the client side.
      const drainThenEnd = (): void => {
        if (flow.queuedBytes === 0) {
          this.#flows.delete(flow);
          client.end();
        } else setTimeout(drainThenEnd, this.#options.tickMs);
      };
      drainThenEnd();
    });
    upstream.on("error", finish);
    client.on("error", finish);
    client.on("close", finish);
  }

  #tick(): void {
    const now = performance.now();
    const elapsed = Math.min(now - this.#lastTick, MAX_CARRY_MS);
    this.#lastTick = now;
    this.#credit += (elapsed * this.#options.bytesPerSecond) / 1000;
    let waiting = [...this.#flows].filter((flow) => flow.queuedBytes > 0);
    if (waiting.length === 0) {
      this.#credit = 0; // an idle link banks nothing
      return;
    }
    // Water-filling: an even share each round; flows that need less leave the rest to others.
    while (this.#credit >= 1 && waiting.length > 0) {
      const share = Math.floor(this.#credit / waiting.length);
      if (share === 0) break;
      for (const flow of waiting) {
        const bytes = flow.take(share);
        this.#credit -= bytes.length;
        this.#forwarded += bytes.length;
        flow.client.write(bytes);
      }
      waiting = waiting.filter((flow) => flow.queuedBytes > 0);
    }
    for (const flow of this.#flows) {
      if (flow.isPaused && flow.queuedBytes < HIGH_WATER_BYTES / 2) {
        flow.isPaused = false;
        flow.upstream.resume();
      }
    }
  }
}

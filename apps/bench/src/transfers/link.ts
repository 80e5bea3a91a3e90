// A file server's link simulated by time, not by moving bytes. Every Range request is one HTTP
// response on one connection of an undici-like pool: a new connection first pays its handshake,
// the request waits a round trip, then the response is sent in round trips of the connection's
// congestion window (slow start: the window grows by what was acknowledged), at most at the
// per-connection cap, and every response that has window left shares the link's bandwidth
// evenly with the others, as TCP flows share a bottleneck. Driven by a Clock, so under a
// ManualClock a run takes no CPU beyond the gates themselves and the link is a true ceiling.

import type { Clock, Timer } from "@telepace/core";
import { seededRandom } from "../random.js";
import { type Connection, type ConnectionModel, ConnectionPool } from "./connections.js";

/** The link a run crosses; every contender gets the same one. */
export interface LinkModel {
  /** Bandwidth shared by every response in flight, bytes per second. */
  readonly bytesPerSecond: number;
  /** The most one connection (one response) carries, bytes per second. */
  readonly connectionBytesPerSecond: number;
  /** From sending a request to its first response byte, ms (the mean, with jitter). */
  readonly roundTripMs: number;
  /**
   * Each request's round trip is drawn uniformly from `roundTripMs × (1 ± roundTripJitter)`,
   * seeded, so responses started together do not move in lockstep. A fraction in [0, 1).
   */
  readonly roundTripJitter: number;
  readonly connection: ConnectionModel;
}

/** Options of {@link TimedLink}. */
export interface TimedLinkOptions extends LinkModel {
  readonly clock: Clock;
  /** Seed of the round-trip jitter. */
  readonly seed: number;
}

/** What the link measured of its requests, on its clock. */
export interface LinkCounters {
  readonly requests: number;
  /** Requests that waited for a handshake first. */
  readonly handshakes: number;
  /** Requests on an open connection, and the sum of their send → first byte times, ms. */
  readonly firstByteCount: number;
  readonly firstByteMsSum: number;
  /** Connections the pool held at the end. */
  readonly connections: number;
}

interface Flow {
  readonly tag: number;
  readonly connection: Connection;
  readonly roundTripMs: number;
  remaining: number;
  /** What the window still lets the server send in this round trip. */
  roundBudget: number;
  /** Sent in this round trip: acknowledged by its end, so the window grows by it. */
  roundSent: number;
  roundEndsAt: number;
  readonly resolve: () => void;
}

/** Bytes (and ms) below this count as none: floating-point residue of the sharing arithmetic. */
const EPSILON = 1e-6;

export class TimedLink {
  readonly #clock: Clock;
  readonly #bytesPerMs: number;
  readonly #connectionBytesPerMs: number;
  readonly #roundTripMs: number;
  readonly #jitter: number;
  readonly #handshakeRoundTrips: number;
  readonly #random: () => number;
  readonly #pool: ConnectionPool;
  readonly #flows = new Set<Flow>();
  readonly #delivered = new Map<number, number>();
  #rate = 0;
  #lastUpdate: number;
  #timer: Timer | undefined;
  #totalDelivered = 0;
  #requests = 0;
  #firstByteCount = 0;
  #firstByteMsSum = 0;

  constructor(options: TimedLinkOptions) {
    for (const key of ["bytesPerSecond", "connectionBytesPerSecond"] as const) {
      if (!(options[key] > 0)) {
        throw new RangeError(`Expected \`${key}\` to be > 0, got ${String(options[key])}`);
      }
    }
    if (!(options.roundTripMs >= 0)) {
      throw new RangeError(
        `Expected \`roundTripMs\` to be >= 0, got ${String(options.roundTripMs)}`,
      );
    }
    if (!(options.roundTripJitter >= 0 && options.roundTripJitter < 1)) {
      throw new RangeError(
        `Expected \`roundTripJitter\` to be in [0, 1), got ${String(options.roundTripJitter)}`,
      );
    }
    if (!(options.connection.initialWindowBytes > 0)) {
      throw new RangeError(
        `Expected \`initialWindowBytes\` to be > 0, got ${String(options.connection.initialWindowBytes)}`,
      );
    }
    this.#clock = options.clock;
    this.#bytesPerMs = options.bytesPerSecond / 1000;
    this.#connectionBytesPerMs = options.connectionBytesPerSecond / 1000;
    this.#roundTripMs = options.roundTripMs;
    this.#jitter = options.roundTripJitter;
    this.#handshakeRoundTrips = options.connection.handshakeRoundTrips;
    this.#random = seededRandom(options.seed);
    this.#pool = new ConnectionPool(options.connection);
    this.#lastUpdate = options.clock.now();
  }

  /** Bytes delivered so far, in total. */
  get deliveredBytes(): number {
    this.#advance();
    return this.#totalDelivered;
  }

  /** Bytes delivered so far to requests carrying `tag`. */
  deliveredTo(tag: number): number {
    this.#advance();
    return this.#delivered.get(tag) ?? 0;
  }

  get counters(): LinkCounters {
    return {
      requests: this.#requests,
      handshakes: this.#pool.openedCount,
      firstByteCount: this.#firstByteCount,
      firstByteMsSum: this.#firstByteMsSum,
      connections: this.#pool.size,
    };
  }

  /** One request whose response is `bytes` long; resolves when its last byte arrives. */
  async fetch(bytes: number, tag: number): Promise<void> {
    this.#requests++;
    const roundTripMs = this.#roundTripMs * (1 + this.#jitter * (2 * this.#random() - 1));
    const sentAt = this.#clock.now();
    const { connection, needsHandshake } = this.#pool.take(sentAt);
    const handshakeMs = needsHandshake ? this.#handshakeRoundTrips * roundTripMs : 0;
    await this.#clock.sleep(handshakeMs + roundTripMs);
    const firstByteAt = this.#clock.now();
    if (!needsHandshake) {
      this.#firstByteCount++;
      this.#firstByteMsSum += firstByteAt - sentAt;
    }
    this.#pool.startResponse(connection, firstByteAt, roundTripMs);
    if (bytes > 0) {
      await new Promise<void>((resolve) => {
        this.#advance();
        this.#flows.add({
          tag,
          connection,
          roundTripMs,
          remaining: bytes,
          roundBudget: connection.windowBytes,
          roundSent: 0,
          roundEndsAt: firstByteAt + roundTripMs,
          resolve,
        });
        this.#settle();
      });
    }
    this.#pool.release(connection, this.#clock.now());
  }

  // Moves every sending flow forward to now at the rate set at the last event.
  #advance(): void {
    const now = this.#clock.now();
    const elapsed = now - this.#lastUpdate;
    this.#lastUpdate = now;
    if (elapsed <= 0 || this.#rate === 0) return;
    for (const flow of this.#flows) {
      if (!isSending(flow)) continue;
      const moved = Math.min(this.#rate * elapsed, flow.remaining, flow.roundBudget);
      flow.remaining -= moved;
      flow.roundBudget -= moved;
      flow.roundSent += moved;
      this.#totalDelivered += moved;
      this.#delivered.set(flow.tag, (this.#delivered.get(flow.tag) ?? 0) + moved);
    }
  }

  // Ends due round trips (the window grows by what they acknowledged), finishes complete
  // responses, shares the bandwidth anew and arms one timer at the next event.
  #settle(): void {
    const now = this.#clock.now();
    for (const flow of this.#flows) {
      if (flow.remaining <= EPSILON) {
        flow.connection.windowBytes += flow.roundSent;
        this.#flows.delete(flow);
        flow.resolve();
        continue;
      }
      if (flow.roundEndsAt - now <= EPSILON) {
        flow.connection.windowBytes += flow.roundSent;
        flow.roundBudget = flow.connection.windowBytes;
        flow.roundSent = 0;
        flow.roundEndsAt = now + flow.roundTripMs;
      }
    }
    let sending = 0;
    for (const flow of this.#flows) if (isSending(flow)) sending++;
    this.#rate =
      sending === 0 ? 0 : Math.min(this.#connectionBytesPerMs, this.#bytesPerMs / sending);
    this.#timer?.cancel();
    this.#timer = undefined;
    let nextMs = Number.POSITIVE_INFINITY;
    for (const flow of this.#flows) {
      nextMs = Math.min(nextMs, flow.roundEndsAt - now);
      if (isSending(flow)) {
        nextMs = Math.min(nextMs, Math.min(flow.remaining, flow.roundBudget) / this.#rate);
      }
    }
    if (nextMs === Number.POSITIVE_INFINITY) return;
    this.#timer = this.#clock.setTimer(
      () => {
        this.#timer = undefined;
        this.#advance();
        this.#settle();
      },
      Math.max(0, nextMs),
    );
  }
}

/** A flow competes for the link while it has bytes left and window to send them in. */
function isSending(flow: Flow): boolean {
  return flow.remaining > EPSILON && flow.roundBudget > EPSILON;
}

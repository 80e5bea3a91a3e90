// The client's connections to the file server, as undici's default pool keeps them (Node's
// `fetch` uses it): one request at a time per connection, the first idle connection in creation
// order is reused, a new one is opened when none is idle, and an idle one closes after the
// keep-alive timeout. Each connection carries the sender's congestion window between responses.

/** The TCP behaviour of a connection, from the RFCs a Linux file server follows. */
export interface ConnectionModel {
  /** Congestion window of a new connection, bytes (RFC 6928: 10 segments of 1460 bytes). */
  readonly initialWindowBytes: number;
  /** Round trips before a new connection can carry a request (TCP + TLS 1.3: 2). */
  readonly handshakeRoundTrips: number;
  /**
   * A connection that sent nothing for longer than its retransmission timeout restarts from the
   * initial window (RFC 5681 §4.1); the timeout is this floor (Linux: 200 ms) or two round
   * trips, whichever is longer, ms.
   */
  readonly idleRestartMs: number;
  /** An idle connection closes after this long (undici's `keepAliveTimeout`: 4 s), ms. */
  readonly keepAliveMs: number;
}

/** One connection of the pool. */
export interface Connection {
  /** Congestion window, bytes: what the server may send in one round trip. */
  windowBytes: number;
  /** When its last response ended, ms; `undefined` before the first. */
  lastActiveAt: number | undefined;
  isBusy: boolean;
}

/** What {@link ConnectionPool.take} hands out. */
export interface TakenConnection {
  readonly connection: Connection;
  /** Whether a handshake precedes the request (a new connection, or one closed while idle). */
  readonly needsHandshake: boolean;
}

export class ConnectionPool {
  readonly #model: ConnectionModel;
  readonly #connections: Connection[] = [];
  #opened = 0;

  constructor(model: ConnectionModel) {
    this.#model = model;
  }

  /** Connections opened so far (new ones and reopened ones). */
  get openedCount(): number {
    return this.#opened;
  }

  /** Connections in the pool. */
  get size(): number {
    return this.#connections.length;
  }

  /** The connection a request sent at `nowMs` goes out on; it is busy until {@link release}. */
  take(nowMs: number): TakenConnection {
    let connection = this.#connections.find((candidate) => !candidate.isBusy);
    if (connection === undefined) {
      connection = {
        windowBytes: this.#model.initialWindowBytes,
        lastActiveAt: undefined,
        isBusy: false,
      };
      this.#connections.push(connection);
    }
    connection.isBusy = true;
    const { lastActiveAt } = connection;
    const isClosed = lastActiveAt !== undefined && nowMs - lastActiveAt > this.#model.keepAliveMs;
    if (isClosed) connection.windowBytes = this.#model.initialWindowBytes;
    const needsHandshake = lastActiveAt === undefined || isClosed;
    if (needsHandshake) this.#opened++;
    return { connection, needsHandshake };
  }

  /**
   * The response's first byte leaves the server at `nowMs`: after a long idle the window
   * restarts (the server has had no acknowledgements to clock it by).
   */
  startResponse(connection: Connection, nowMs: number, roundTripMs: number): void {
    const { lastActiveAt } = connection;
    const timeoutMs = Math.max(this.#model.idleRestartMs, 2 * roundTripMs);
    if (lastActiveAt !== undefined && nowMs - lastActiveAt > timeoutMs) {
      connection.windowBytes = Math.min(connection.windowBytes, this.#model.initialWindowBytes);
    }
  }

  /** The response ended at `nowMs`; the connection is idle again. */
  release(connection: Connection, nowMs: number): void {
    connection.isBusy = false;
    connection.lastActiveAt = nowMs;
  }
}

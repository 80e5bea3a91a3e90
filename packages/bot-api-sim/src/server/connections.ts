// The server's open connections and their cap: at the cap a newcomer displaces the oldest
// connection still waiting to send headers (a stalled or dripping client), never a busy one.

import type { Socket } from "node:net";

/** What became of a new connection. */
export type Admission = "admitted" | "displaced-idle" | "refused";

/** Connection bookkeeping with a cap. */
export class Connections {
  readonly #max: number;
  /** Every open socket, oldest first, with the number of its requests in progress. */
  readonly #busy = new Map<Socket, number>();

  constructor(maxConnections: number) {
    this.#max = maxConnections;
  }

  get size(): number {
    return this.#busy.size;
  }

  /** Takes in a new socket, making room at the cap; a refused socket is destroyed. */
  admit(socket: Socket): Admission {
    let admission: Admission = "admitted";
    if (this.#busy.size >= this.#max) {
      const idle = this.#oldestIdle();
      if (idle === undefined) {
        socket.destroy();
        return "refused";
      }
      this.#busy.delete(idle);
      idle.destroy();
      admission = "displaced-idle";
    }
    this.#busy.set(socket, 0);
    socket.once("close", () => this.#busy.delete(socket));
    return admission;
  }

  /** A request started on the socket (its headers have arrived). */
  begin(socket: Socket): void {
    const count = this.#busy.get(socket);
    if (count !== undefined) this.#busy.set(socket, count + 1);
  }

  /** A request on the socket ended (answered or abandoned). */
  end(socket: Socket): void {
    const count = this.#busy.get(socket);
    if (count !== undefined && count > 0) this.#busy.set(socket, count - 1);
  }

  /** Destroys every socket. */
  destroyAll(): void {
    for (const socket of this.#busy.keys()) socket.destroy();
  }

  #oldestIdle(): Socket | undefined {
    for (const [socket, count] of this.#busy) if (count === 0) return socket;
    return undefined;
  }
}

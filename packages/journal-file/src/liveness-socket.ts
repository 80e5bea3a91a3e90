// A lock holder's proof of life that works across pid namespaces: it listens on a Unix socket in
// the journal directory, and the kernel closes that socket when the process dies however it dies
// (SIGKILL included). Connecting tells another process, in any container sharing the directory on
// the same kernel, whether the holder is alive: no pid, no clock, no heartbeat to miss.

import { randomBytes } from "node:crypto";
import { open } from "node:fs/promises";
import { createConnection, createServer, type Server } from "node:net";
import { join } from "node:path";

/** Longest socket path the kernel takes (`sun_path` is 108 bytes with its terminating NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

/** A path for a socket address, and what to release once it is no longer used. */
interface SocketPath {
  readonly path: string | undefined;
  release(): Promise<void>;
}

/**
 * A path to `name` in `directory` that fits a socket address: the plain path, or for a long
 * directory on Linux one through `/proc/self/fd` (Node would silently cut a longer one and bind or
 * reach another file). `path` is `undefined` when neither fits.
 */
async function socketPath(directory: string, name: string): Promise<SocketPath> {
  const plain = join(directory, name);
  const none = async () => {};
  if (Buffer.byteLength(plain) <= MAX_SOCKET_PATH_BYTES) return { path: plain, release: none };
  if (process.platform !== "linux") return { path: undefined, release: none };
  const handle = await open(directory, "r");
  return { path: `/proc/self/fd/${handle.fd}/${name}`, release: () => handle.close() };
}

/** A listening liveness socket; {@link close} removes it. */
export interface LivenessSocket {
  /** Its file name in the journal directory. */
  readonly name: string;
  close(): Promise<void>;
}

function listen(server: Server, path: string | undefined): Promise<boolean> {
  if (path === undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(path, () => resolve(true));
  });
}

/**
 * Listens on a new socket in `directory`. Resolves `undefined` where that is impossible (Windows,
 * a file system without sockets, a path too long): the lock then falls back to pids.
 */
export async function listenLiveness(directory: string): Promise<LivenessSocket | undefined> {
  if (process.platform === "win32") return undefined;
  const name = `journal.${randomBytes(6).toString("hex")}.sock`;
  const address = await socketPath(directory, name).catch(() => undefined);
  if (address === undefined) return undefined;
  const server = createServer((connection) => connection.destroy());
  if (!(await listen(server, address.path))) {
    await address.release();
    return undefined;
  }
  // A failed accept must not crash the process; the socket is only ever connected to, never read.
  server.on("error", () => {});
  // An open journal does not keep the process alive.
  server.unref();
  return {
    name,
    // Closing removes the socket file by the path it was bound to, so that path must still work.
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await address.release();
    },
  };
}

function connect(path: string | undefined): Promise<Liveness> {
  if (path === undefined) return Promise.resolve("unknown");
  return new Promise((resolve) => {
    const connection = createConnection({ path });
    connection.once("connect", () => {
      connection.destroy();
      resolve("alive");
    });
    connection.once("error", (error: NodeJS.ErrnoException) => {
      connection.destroy();
      if (error.code === "ECONNREFUSED") resolve("gone");
      else if (error.code === "EAGAIN") resolve("alive");
      else resolve("unknown");
    });
  });
}

/** What connecting to a holder's socket said. */
export type Liveness = "alive" | "gone" | "unknown";

/**
 * Connects to the socket `name` in `directory`: `alive` when a process listens (or its backlog is
 * full), `gone` when the socket file is there but nobody listens (its process died), `unknown`
 * when the file is missing or cannot be reached (then only the pid can say).
 */
export async function probeLiveness(directory: string, name: string): Promise<Liveness> {
  const address = await socketPath(directory, name).catch(() => undefined);
  if (address === undefined) return "unknown";
  try {
    return await connect(address.path);
  } finally {
    await address.release();
  }
}

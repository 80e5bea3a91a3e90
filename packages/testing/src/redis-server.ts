// A throwaway redis-server for tests: started from PATH on a free loopback port with nothing
// persisted (unless a test asks for more), ready once it answers PING, stopped or killed
// afterwards. Where no redis-server is installed the suites that need one say so loudly instead of
// passing silently.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createServer, Socket } from "node:net";
import { isCi } from "./ci.js";

/** A running test server. */
export interface RedisTestServer {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Kills the server (SIGKILL when SIGTERM is not enough) and waits for it to exit. */
  stop(): Promise<void>;
  /** `kill -9`: the server dies at once, writing nothing more to disk. */
  kill(): Promise<void>;
}

/** Options of {@link startRedis}. */
export interface StartRedisOptions {
  /** The port, e.g. to restart a stopped server on its address. @defaultValue a free one */
  readonly port?: number;
  /**
   * More `redis-server` arguments, after the defaults (`--save "" --appendonly no`), so they win:
   * `["--appendonly", "yes", "--dir", dir]` persists, `["--requirepass", pw]` asks for a password,
   * `["--enable-debug-command", "local"]` allows `DEBUG SLEEP`.
   */
  readonly args?: readonly string[];
}

/** Whether a `redis-server` binary is on PATH. */
export function hasRedisServer(): boolean {
  const probe = spawnSync("redis-server", ["--version"], { stdio: "ignore" });
  return probe.error === undefined && probe.status === 0;
}

/** How to install one, for messages. */
export const REDIS_INSTALL_HINT = "apt-get update && apt-get install -y redis-server";

/** A port the OS says is free now (a tiny race with other starters is retried by the caller). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * One PING over a raw socket: true once the server answers (+PONG; -NOAUTH when it asks for a
 * password, -LOADING while it loads its data).
 */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once("error", () => done(false));
    socket.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
    socket.once("data", (data) => done(/^(\+PONG|-NOAUTH|-LOADING)/.test(data.toString())));
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

async function startOnce(
  port: number,
  args: readonly string[],
): Promise<RedisTestServer | undefined> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...args],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const deadline = performance.now() + 10_000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) {
      if (/address already in use/i.test(output)) return undefined;
      throw new Error(`redis-server exited with ${child.exitCode}: ${output.slice(-500)}`);
    }
    if (await ping(port)) {
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        async stop() {
          child.kill("SIGTERM");
          const timer = setTimeout(() => child.kill("SIGKILL"), 2_000);
          await exited(child);
          clearTimeout(timer);
        },
        async kill() {
          child.kill("SIGKILL");
          await exited(child);
        },
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill("SIGKILL");
  throw new Error(`redis-server on port ${port} did not answer PING within 10 s: ${output}`);
}

/**
 * Starts `redis-server` from PATH on a free loopback port (or `port`, e.g. to restart a stopped
 * one) with `--save "" --appendonly no` and then `args`, and resolves once it answers PING.
 *
 * @throws Error naming the install command when no redis-server is on PATH.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisTestServer> {
  const args = options.args ?? [];
  if (!hasRedisServer()) {
    throw new Error(`redis-server is not on PATH; install it: ${REDIS_INSTALL_HINT}`);
  }
  if (options.port !== undefined) {
    const server = await startOnce(options.port, args);
    if (server === undefined) throw new Error(`port ${options.port} is in use`);
    return server;
  }
  for (let attempt = 0; attempt < 5; attempt++) {
    const server = await startOnce(await freePort(), args);
    if (server !== undefined) return server;
  }
  throw new Error("redis-server found no free port in 5 attempts");
}

/**
 * How a suite that needs Redis runs on this machine: `"run"` with a redis-server on PATH;
 * without one `"fail"` under CI (a missing server must not pass as green) and `"skip"` elsewhere,
 * after a console warning naming the suites that did not run.
 */
export function redisSuiteMode(suites: readonly string[]): "run" | "fail" | "skip" {
  if (hasRedisServer()) return "run";
  if (isCi()) return "fail";
  console.warn(
    `\n*** redis-server is not on PATH: these suites did NOT run: ${suites.join(", ")}.\n` +
      `*** Install it (${REDIS_INSTALL_HINT}) to run them; under CI they fail instead.\n`,
  );
  return "skip";
}

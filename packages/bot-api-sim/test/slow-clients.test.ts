// Slow and stalled clients over real loopback sockets: connections that drip their headers are
// closed with 408 after `headersTimeoutMs`, and at `maxConnections` a new client displaces the
// oldest connection still waiting for headers, so the simulator keeps answering everyone else.

import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, start } from "../src/index.js";
import { call, type Reply } from "./helpers.js";

let sim: BotApiSim | undefined;
const open: Socket[] = [];
afterEach(async () => {
  for (const socket of open.splice(0)) socket.destroy();
  await sim?.close({ timeoutMs: 0 });
  sim = undefined;
});

interface Dripper {
  readonly socket: Socket;
  /** Everything the server wrote back. */
  readonly received: () => string;
  /** Resolves when the server closed the connection. */
  readonly closed: Promise<void>;
}

/** A client that starts a request and then sends one header line every `everyMs`, never ending. */
function dripper(running: BotApiSim, everyMs = 40): Promise<Dripper> {
  return new Promise((resolve) => {
    const socket = connect(running.port, "127.0.0.1");
    open.push(socket);
    let received = "";
    let timer: NodeJS.Timeout | undefined;
    const closed = new Promise<void>((done) => {
      socket.on("close", () => {
        clearInterval(timer);
        done();
      });
    });
    socket.on("error", () => {});
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
    });
    socket.on("connect", () => {
      socket.write(`GET /bot${running.token}/getMe HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
      timer = setInterval(() => {
        if (socket.writable) socket.write("X-Drip: 1\r\n");
      }, everyMs);
      resolve({ socket, received: () => received, closed });
    });
  });
}

/** Ends a parked long poll by giving it an update. */
function wake(running: BotApiSim, poll: Promise<Reply>): Promise<Reply> {
  const user = running.users.create();
  running.sendText(user, running.chats.createPrivate(user), "wake up");
  return poll;
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
}

describe("slow clients", () => {
  it("closes a connection whose headers do not arrive within headersTimeoutMs, with 408", async () => {
    sim = await start({ headersTimeoutMs: 150 });
    const slow = await dripper(sim);
    const { ms } = await timed(slow.closed);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout/);
    expect(ms).toBeGreaterThanOrEqual(100);
    expect(ms).toBeLessThan(2000);
    expect(sim.counters().headersTimedOut).toBe(1);
  });

  it("keeps answering while hundreds of connections drip their headers", async () => {
    sim = await start({ headersTimeoutMs: 60_000 });
    const drippers = await Promise.all(
      Array.from({ length: 300 }, () => dripper(sim as BotApiSim)),
    );
    const { value, ms } = await timed(call(sim, "getMe"));
    expect(value.status).toBe(200);
    expect(ms).toBeLessThan(1000);
    expect(drippers.every((d) => !d.socket.destroyed)).toBe(true);
  });

  it("at maxConnections a new client displaces the oldest stalled one, never a busy one", async () => {
    sim = await start({ headersTimeoutMs: 60_000, maxConnections: 32 });
    // A parked long poll is a busy connection: it must survive the flood.
    const poll = call(sim, "getUpdates", { timeout: 30 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const drippers = await Promise.all(
      Array.from({ length: 200 }, () => dripper(sim as BotApiSim)),
    );
    await Promise.all(drippers.slice(0, 150).map((d) => d.closed));
    const { value, ms } = await timed(call(sim, "getMe"));
    expect(value.status).toBe(200);
    expect(ms).toBeLessThan(1000);
    expect(sim.counters().connectionsShed).toBeGreaterThanOrEqual(169);
    const polled = await wake(sim, poll);
    expect(polled.status).toBe(200);
    expect(polled.body.result).toHaveLength(1);
  });

  it("refuses a new connection when every connection is busy", async () => {
    sim = await start({ headersTimeoutMs: 60_000, maxConnections: 1 });
    const poll = call(sim, "getUpdates", { timeout: 30 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = await dripper(sim);
    await refused.closed;
    expect(refused.received()).toBe("");
    expect(sim.counters().connectionsShed).toBe(1);
    expect((await wake(sim, poll)).status).toBe(200);
  });
});

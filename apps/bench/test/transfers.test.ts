import net from "node:net";
import { describe, expect, it } from "vitest";
import { CHUNK_BYTES, chunksOf } from "../src/transfers/files.js";
import { ShapedLink } from "../src/transfers/link.js";
import { runTransfers, type TransfersConfig } from "../src/transfers/run.js";

const KiB = 1024;
const MiB = 1024 * KiB;

describe("chunksOf", () => {
  it("covers a file with 512 KiB Range chunks, the last one shorter", () => {
    const chunks = chunksOf(CHUNK_BYTES * 2 + 100);
    expect(chunks).toEqual([
      { start: 0, length: CHUNK_BYTES },
      { start: CHUNK_BYTES, length: CHUNK_BYTES },
      { start: CHUNK_BYTES * 2, length: 100 },
    ]);
    expect(chunksOf(0)).toEqual([]);
  });
});

describe("ShapedLink", () => {
  it("forwards both directions byte for byte", async () => {
    const payload = Buffer.alloc(300 * KiB);
    for (let index = 0; index < payload.length; index++) payload[index] = (index * 31) % 251;
    const server = net.createServer((socket) => {
      socket.once("data", () => socket.end(payload));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const link = new ShapedLink({
      targetPort: (server.address() as net.AddressInfo).port,
      bytesPerSecond: 64 * MiB,
    });
    const port = await link.listen();
    try {
      const received = await new Promise<Buffer>((resolve, reject) => {
        const parts: Buffer[] = [];
        const client = net.connect(port, "127.0.0.1", () => client.write("hello"));
        client.on("data", (part: Buffer) => parts.push(part));
        client.on("end", () => resolve(Buffer.concat(parts)));
        client.on("error", reject);
      });
      expect(received.equals(payload)).toBe(true);
      expect(link.forwardedBytes).toBe(payload.length);
    } finally {
      await link.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("refuses a bandwidth that is not positive", () => {
    expect(() => new ShapedLink({ targetPort: 1, bytesPerSecond: 0 })).toThrow(
      "Expected `bytesPerSecond` to be > 0, got 0",
    );
  });
});

describe("runTransfers (tiny)", () => {
  it("downloads through every gate, keeps the budgets and measures fairness", async () => {
    const config: TransfersConfig = {
      linkBytesPerSecond: 64 * MiB,
      large: { count: 1, sizeBytes: 2 * MiB },
      small: { count: 6, minBytes: 16 * KiB, maxBytes: 64 * KiB, firstStartMs: 5, intervalMs: 5 },
      equal: { count: 3, sizeBytes: MiB, budgetBytes: 512 * KiB },
      repeats: 1,
      grants: { transfers: 50, grantsPerTransfer: 3, repeats: 1 },
      seed: 3,
    };
    const result = await runTransfers(config);
    const figures = result.figures as {
      mixed: { gate: string; peakBytesInFlight: number; throughputBytesPerSecond: number }[];
      fairness: { gate: string; jainAtFirstFinish: number }[];
      grants: { overheadPerGrantUs: number }[];
    };
    expect(figures.mixed).toHaveLength(6);
    for (const run of figures.mixed) {
      expect(run.throughputBytesPerSecond).toBeGreaterThan(0);
      if (run.gate !== "no limit") expect(run.peakBytesInFlight).toBeLessThanOrEqual(16 * MiB);
    }
    for (const run of figures.fairness) {
      expect(run.jainAtFirstFinish).toBeGreaterThan(0);
      expect(run.jainAtFirstFinish).toBeLessThanOrEqual(1);
    }
    expect(figures.grants).toHaveLength(3);
    expect(result.tables.map((table) => table.rows.length)).toEqual([6, 4, 3]);
  }, 30_000);
});

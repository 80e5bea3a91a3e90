// File bytes under the media scheduler: downloads in ranged chunks (or one metered stream when the
// server ignores Range or the size is unknown), every permit released; the generated /file content
// is deterministic per position and its digest matches what an upload streams.

import { randomBytes } from "node:crypto";
import type { File } from "@grammyjs/types";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { TelegramClient } from "@telepace/client";
import { MediaSchedulerRegistry } from "@telepace/media-scheduler";
import { afterEach, describe, expect, it } from "vitest";
import {
  CHUNK_BYTES,
  downloadDigest,
  generatedChunk,
  generatedDigest,
  meteredUpload,
} from "../src/media-io.js";
import { E2E_TIMEOUT_MS, sha256 } from "./harness.js";

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

describe("generated files", () => {
  it("produce the same bytes for a position however they are chunked", () => {
    const whole = generatedChunk(0, 10_000);
    expect(concat([generatedChunk(0, 4321), generatedChunk(4321, 10_000 - 4321)])).toEqual(whole);
    expect(generatedChunk(0, 10_000)).toEqual(whole);
    // Not a constant fill.
    expect(new Set(whole).size).toBeGreaterThan(200);
  });

  it("have the digest of their bytes, for sizes around the chunk size", () => {
    for (const size of [1, 1024, CHUNK_BYTES - 1, CHUNK_BYTES, CHUNK_BYTES + 1, 3 * CHUNK_BYTES]) {
      expect(generatedDigest(size), String(size)).toBe(sha256(generatedChunk(0, size)));
    }
  });

  it("stream for an upload in chunks, each under a permit released when the next is pulled", async () => {
    const registry = new MediaSchedulerRegistry();
    const size = 2 * CHUNK_BYTES + 100;
    const parts: Uint8Array[] = [];
    const held: number[] = [];
    for await (const part of meteredUpload(registry, "api", size, new AbortController().signal)) {
      parts.push(part);
      held.push(registry.snapshot().schedulers[0]?.activeBytes ?? 0);
    }
    expect(parts.map((part) => part.length)).toEqual([CHUNK_BYTES, CHUNK_BYTES, 100]);
    expect(sha256(concat(parts))).toBe(sha256(generatedChunk(0, size)));
    // One chunk's permit at a time (charges are rounded up to 64 KiB).
    expect(held).toEqual([CHUNK_BYTES, CHUNK_BYTES, 64 * 1024]);
    const after = registry.snapshot();
    expect(after.openTransfers).toBe(0);
    expect(after.counters.grants).toBe(3);
    expect(after.counters.releases).toBe(3);
    await registry.close();
  });
});

describe("downloadDigest", { timeout: E2E_TIMEOUT_MS }, () => {
  let sim: BotApiSim;
  let client: TelegramClient;
  let registry: MediaSchedulerRegistry;

  /** Downloads `file` to its digest through the bot's registry, with nothing aborting it. */
  const digestOf = (file: File) =>
    downloadDigest(client, registry, "api", file, new AbortController().signal);

  async function setup(): Promise<File & { bytes: Uint8Array }> {
    sim = await start({ rateLimits: false });
    client = new TelegramClient({ token: sim.token, apiRoot: sim.apiRoot });
    registry = new MediaSchedulerRegistry();
    const user = sim.users.create();
    const bytes = randomBytes(2 * CHUNK_BYTES + 777);
    const sent = sim.sendDocument(user, sim.chats.createPrivate(user), { bytes });
    if (!("document" in sent)) throw new Error("expected a document");
    return { ...(await client.getFile(sent.document.file_id)), bytes };
  }

  afterEach(async () => {
    await client?.close({ drain: false, timeoutMs: 0 });
    await registry?.close();
    await sim?.close();
  });

  function expectAllReleased(): void {
    const snapshot = registry.snapshot();
    expect(snapshot.openTransfers).toBe(0);
    expect(snapshot.counters.releases).toBe(snapshot.counters.grants);
  }

  it("fetches a file of known size in ranged chunks", async () => {
    const file = await setup();
    const digest = await digestOf(file);
    expect(digest).toEqual({ sizeBytes: file.bytes.length, sha256: sha256(file.bytes), chunks: 3 });
    expectAllReleased();
  });

  it("hashes the whole body from byte 0 when the server ignores Range", async () => {
    const file = await setup();
    sim.setRangeRequests(false);
    const digest = await digestOf(file);
    expect(digest).toEqual({ sizeBytes: file.bytes.length, sha256: sha256(file.bytes), chunks: 0 });
    expect(sim.counters().bytesServed).toBe(file.bytes.length);
    expectAllReleased();
  });

  it("streams a file whose size is unknown", async () => {
    const { file_size: _size, ...file } = await setup();
    const digest = await digestOf(file);
    expect(digest).toEqual({ sizeBytes: file.bytes.length, sha256: sha256(file.bytes), chunks: 0 });
    expectAllReleased();
  });

  it("stops at an aborted signal and releases what it held", async () => {
    const file = await setup();
    sim.faults.setLatency(200, { methods: ["download"] });
    const controller = new AbortController();
    const digest = downloadDigest(client, registry, "api", file, controller.signal);
    setTimeout(() => controller.abort(new Error("user went away")), 50);
    await expect(digest).rejects.toThrow();
    expectAllReleased();
  });
});

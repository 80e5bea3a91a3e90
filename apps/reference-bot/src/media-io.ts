// File bytes under the media scheduler's budget: downloads fetched in ranged chunks and uploads
// streamed in chunks, each chunk holding a permit while its bytes are in flight, so a large file
// never starves a small one and the bot's memory for transfers stays bounded.

import { createHash } from "node:crypto";
import type { File } from "@grammyjs/types";
import type { TelegramClient } from "@telepace/client";
import type { MediaSchedulerRegistry, MediaTransfer } from "@telepace/media-scheduler";

/** Bytes fetched or streamed per permit. */
export const CHUNK_BYTES = 256 * 1024;

/** The result of a download: how many bytes arrived and their SHA-256. */
export interface DownloadDigest {
  readonly sizeBytes: number;
  readonly sha256: string;
  /** Ranged requests made (0 when the server ignored Range and sent the file whole). */
  readonly chunks: number;
}

/**
 * Downloads a file in {@link CHUNK_BYTES} ranges, one media-scheduler permit per range, hashing as
 * it goes. Falls back to one streamed response (still metered per chunk) when the server ignores
 * Range or the size is unknown.
 */
export async function downloadDigest(
  client: TelegramClient,
  registry: MediaSchedulerRegistry,
  dc: string,
  file: File,
  signal: AbortSignal,
): Promise<DownloadDigest> {
  const size = file.file_size;
  using transfer = registry.open({ dc, direction: "download", sizeBytes: size });
  const hash = createHash("sha256");
  let received = 0;
  let chunks = 0;
  if (size !== undefined) {
    while (received < size) {
      const length = Math.min(CHUNK_BYTES, size - received);
      await using permit = await transfer.acquire(length, { signal });
      const download = await client.downloadFile(file, {
        range: { start: received, end: received + length - 1 },
        signal,
      });
      if (!download.isPartial) {
        // The whole file is coming: hash it from byte 0, metering the rest of the stream. Awaited
        // here, because returning disposes the transfer the stream is still metered by.
        hash.destroy();
        permit.release();
        return await streamDigest(download.body, transfer, signal, 0);
      }
      for await (const piece of download.body as AsyncIterable<Buffer>) {
        hash.update(piece);
        received += piece.length;
      }
      chunks++;
    }
    return { sizeBytes: received, sha256: hash.digest("hex"), chunks };
  }
  const permit = await transfer.acquire(CHUNK_BYTES, { signal });
  permit.release();
  const download = await client.downloadFile(file, { signal });
  return await streamDigest(download.body, transfer, signal, 0);
}

async function streamDigest(
  body: AsyncIterable<Buffer>,
  transfer: MediaTransfer,
  signal: AbortSignal,
  chunks: number,
): Promise<DownloadDigest> {
  const hash = createHash("sha256");
  let received = 0;
  let permit = await transfer.acquire(CHUNK_BYTES, { signal });
  let inPermit = 0;
  try {
    for await (const piece of body) {
      hash.update(piece);
      received += piece.length;
      inPermit += piece.length;
      while (inPermit >= CHUNK_BYTES) {
        permit.release();
        inPermit -= CHUNK_BYTES;
        permit = await transfer.acquire(CHUNK_BYTES, { signal });
      }
    }
  } finally {
    permit.release();
  }
  return { sizeBytes: received, sha256: hash.digest("hex"), chunks };
}

/** Deterministic content of a generated file: the same size always gives the same bytes. */
export function generatedChunk(offset: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  // A cheap xorshift keyed by position, so any chunk can be produced independently.
  for (let i = 0; i < length; i++) {
    let x = (offset + i + 1) * 2654435761;
    x ^= x >>> 13;
    x ^= x << 7;
    bytes[i] = x & 0xff;
  }
  return bytes;
}

/** SHA-256 of the generated file of `sizeBytes`. */
export function generatedDigest(sizeBytes: number): string {
  const hash = createHash("sha256");
  for (let offset = 0; offset < sizeBytes; offset += CHUNK_BYTES) {
    hash.update(generatedChunk(offset, Math.min(CHUNK_BYTES, sizeBytes - offset)));
  }
  return hash.digest("hex");
}

/**
 * The generated file as a stream of chunks for an upload, each chunk holding an upload permit
 * until the HTTP body has taken it (the generator resumes only when the next chunk is pulled).
 */
export async function* meteredUpload(
  registry: MediaSchedulerRegistry,
  dc: string,
  sizeBytes: number,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  using transfer = registry.open({ dc, direction: "upload", sizeBytes });
  for (let offset = 0; offset < sizeBytes; offset += CHUNK_BYTES) {
    const length = Math.min(CHUNK_BYTES, sizeBytes - offset);
    await using _permit = await transfer.acquire(length, { signal });
    yield generatedChunk(offset, length);
  }
}

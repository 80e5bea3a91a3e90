// The files of the transfer comparison: uploaded into the sim by a simulated user, located with
// getFile as a bot would, and downloaded in Range chunks — the same bytes for every contender.

import type { BotApiSim } from "@telepace/bot-api-sim";
import { type Dispatcher, request } from "undici";
import { randomInt, seededRandom } from "../random.js";

/** Bytes per Range request; a common chunk size for Bot API and MTProto downloads. */
export const CHUNK_BYTES = 512 * 1024;

/** A file ready to download. */
export interface FileSpec {
  readonly name: string;
  readonly filePath: string;
  readonly sizeBytes: number;
  readonly kind: "small" | "large";
  /** When its download starts, ms after the start of the run. */
  readonly startMs: number;
}

/** One Range request of a file. */
export interface Chunk {
  readonly start: number;
  readonly length: number;
}

/** The chunks of a file, in order. */
export function chunksOf(sizeBytes: number): Chunk[] {
  const chunks: Chunk[] = [];
  for (let start = 0; start < sizeBytes; start += CHUNK_BYTES) {
    chunks.push({ start, length: Math.min(CHUNK_BYTES, sizeBytes - start) });
  }
  return chunks;
}

/** What to upload: a name, a size, a kind and when its download starts. */
export interface FilePlan {
  readonly name: string;
  readonly sizeBytes: number;
  readonly kind: "small" | "large";
  readonly startMs: number;
}

/** Uploads every planned file as a user's document and resolves each one's `file_path`. */
export async function uploadFiles(
  sim: BotApiSim,
  plans: readonly FilePlan[],
  seed: number,
): Promise<FileSpec[]> {
  const random = seededRandom(seed);
  const user = sim.users.create({ firstName: "Uploader" });
  const chat = sim.chats.createPrivate(user);
  const specs: FileSpec[] = [];
  for (const plan of plans) {
    const bytes = new Uint8Array(plan.sizeBytes);
    // Incompressible-looking content without generating every byte at random.
    for (let offset = 0; offset < bytes.length; offset += 4096) {
      bytes[offset] = randomInt(random, 0, 255);
    }
    const message = sim.sendDocument(user, chat, { bytes, fileName: `${plan.name}.bin` });
    const fileId = (message as { document?: { file_id: string } }).document?.file_id;
    if (fileId === undefined) throw new Error("the sim returned no document for an upload");
    const response = await request(
      `${sim.apiRoot}/bot${sim.token}/getFile?file_id=${encodeURIComponent(fileId)}`,
    );
    const body = (await response.body.json()) as { ok: boolean; result?: { file_path?: string } };
    const filePath = body.result?.file_path;
    if (!body.ok || filePath === undefined) {
      throw new Error(`getFile failed for ${plan.name} (HTTP ${response.statusCode})`);
    }
    specs.push({ ...plan, filePath });
  }
  return specs;
}

/**
 * Downloads one chunk through `dispatcher`, reading and discarding the body (reporting bytes as
 * they come); checks its size.
 */
export async function downloadChunk(
  dispatcher: Dispatcher,
  root: string,
  token: string,
  file: FileSpec,
  chunk: Chunk,
  onBytes?: (bytes: number) => void,
): Promise<number> {
  const response = await request(`${root}/file/bot${token}/${file.filePath}`, {
    dispatcher,
    headers: { range: `bytes=${chunk.start}-${chunk.start + chunk.length - 1}` },
  });
  let received = 0;
  for await (const part of response.body) {
    received += (part as Buffer).length;
    onBytes?.((part as Buffer).length);
  }
  if (response.statusCode !== 206 || received !== chunk.length) {
    throw new Error(
      `chunk ${chunk.start}+${chunk.length} of ${file.name}: HTTP ${response.statusCode}, ${received} bytes`,
    );
  }
  return received;
}

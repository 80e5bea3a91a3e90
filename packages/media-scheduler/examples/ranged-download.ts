// Downloads a file the bot received, in 512 KiB ranges under the download budget: each range waits
// for its share of the 16 MiB in flight, so a 2 GB download never starves a 40 KB photo.
// Run: TELEGRAM_BOT_TOKEN=… TELEGRAM_FILE_ID=… node ranged-download.js (the file_id of a document
// someone sent the bot; TELEGRAM_API_ROOT for a local Bot API server or the telepace sim)
import { MediaSchedulerRegistry, type MediaTransfer } from "@telepace/media-scheduler";

const token = process.env.TELEGRAM_BOT_TOKEN;
const fileId = process.env.TELEGRAM_FILE_ID;
if (token === undefined || fileId === undefined) {
  throw new Error("Set TELEGRAM_BOT_TOKEN and TELEGRAM_FILE_ID");
}
const apiRoot = process.env.TELEGRAM_API_ROOT ?? "https://api.telegram.org";
const CHUNK = 512 * 1024;

const registry = new MediaSchedulerRegistry(); // 16 MiB down / 8 MiB up per data centre

async function downloadRanges(transfer: MediaTransfer, url: string, sizeBytes: number) {
  const parts: Uint8Array[] = [];
  for (let offset = 0; offset < sizeBytes; offset += CHUNK) {
    const length = Math.min(CHUNK, sizeBytes - offset);
    const permit = await transfer.acquire(length); // waits for its share of the budget
    try {
      const range = `bytes=${offset}-${offset + length - 1}`;
      const response = await fetch(url, { headers: { range } });
      parts.push(new Uint8Array(await response.arrayBuffer()));
      // 200, not 206: the server sent the whole file (the cloud API does not document ranges).
      if (response.status === 200) break;
    } finally {
      permit.release(); // back to the budget even when the request throws; releasing twice is a no-op
    }
  }
  return parts;
}

// getFile says where the file is and how large; the bytes come through the scheduler.
const info = (await (
  await fetch(`${apiRoot}/bot${token}/getFile?file_id=${encodeURIComponent(fileId)}`)
).json()) as { ok: boolean; result?: { file_path?: string; file_size?: number } };
const { file_path: path, file_size: sizeBytes = 0 } = info.result ?? {};
if (!info.ok || path === undefined) throw new Error("getFile did not find the file");

// The Bot API has one "data centre": its host. Never a URL — file URLs carry the token.
const transfer = registry.open({ dc: new URL(apiRoot).host, direction: "download", sizeBytes });
try {
  const parts = await downloadRanges(transfer, `${apiRoot}/file/bot${token}/${path}`, sizeBytes);
  const bytes = parts.reduce((sum, part) => sum + part.byteLength, 0);
  console.log(`${bytes} bytes in ${parts.length} ranges`);
} finally {
  transfer.close();
  await registry.close();
}

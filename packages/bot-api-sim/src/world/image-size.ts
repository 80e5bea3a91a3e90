// Image dimensions from file headers (PNG, JPEG, GIF, WebP), so sendPhoto can reject what is not
// an image and report width and height like Telegram without decoding pixels.

/** Width and height in pixels, plus a file extension for the stored path. */
export interface ImageInfo {
  readonly width: number;
  readonly height: number;
  readonly extension: "png" | "jpg" | "gif" | "webp";
}

function png(bytes: Uint8Array, view: DataView): ImageInfo | undefined {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length < 24 || signature.some((byte, i) => bytes[i] !== byte)) return undefined;
  return { width: view.getUint32(16), height: view.getUint32(20), extension: "png" };
}

function gif(bytes: Uint8Array, view: DataView): ImageInfo | undefined {
  const head = String.fromCharCode(...bytes.subarray(0, 6));
  if (bytes.length < 10 || (head !== "GIF87a" && head !== "GIF89a")) return undefined;
  return { width: view.getUint16(6, true), height: view.getUint16(8, true), extension: "gif" };
}

function webp(bytes: Uint8Array, view: DataView): ImageInfo | undefined {
  if (bytes.length < 30) return undefined;
  const riff = String.fromCharCode(...bytes.subarray(0, 4));
  const kind = String.fromCharCode(...bytes.subarray(8, 16));
  if (riff !== "RIFF") return undefined;
  if (kind === "WEBPVP8 ") {
    return {
      width: view.getUint16(26, true) & 0x3fff,
      height: view.getUint16(28, true) & 0x3fff,
      extension: "webp",
    };
  }
  if (kind === "WEBPVP8L") {
    const bits = view.getUint32(21, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1, extension: "webp" };
  }
  if (kind === "WEBPVP8X") {
    const width =
      1 + ((bytes[24] as number) | ((bytes[25] as number) << 8) | ((bytes[26] as number) << 16));
    const height =
      1 + ((bytes[27] as number) | ((bytes[28] as number) << 8) | ((bytes[29] as number) << 16));
    return { width, height, extension: "webp" };
  }
  return undefined;
}

function jpeg(bytes: Uint8Array, view: DataView): ImageInfo | undefined {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined;
  let pos = 2;
  while (pos + 9 < bytes.length) {
    if (bytes[pos] !== 0xff) return undefined;
    const marker = bytes[pos + 1] as number;
    if (marker === 0xff) {
      pos++;
      continue;
    }
    const length = view.getUint16(pos + 2);
    // Start-of-frame markers carry the size; 0xC4, 0xC8 and 0xCC share the range but do not.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: view.getUint16(pos + 5), width: view.getUint16(pos + 7), extension: "jpg" };
    }
    if (length < 2) return undefined;
    pos += 2 + length;
  }
  return undefined;
}

/** Reads the dimensions of a PNG, JPEG, GIF or WebP image, or `undefined` for anything else. */
export function imageInfo(bytes: Uint8Array): ImageInfo | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const info = png(bytes, view) ?? jpeg(bytes, view) ?? gif(bytes, view) ?? webp(bytes, view);
  return info !== undefined && info.width > 0 && info.height > 0 ? info : undefined;
}

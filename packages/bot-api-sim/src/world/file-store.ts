// Uploaded file bytes kept in memory under a total byte bound, addressable by file_id (for
// getFile and re-sending) and by file_path (for /file/bot<token>/<file_path> downloads).

import { randomBytes } from "node:crypto";

/** What kind of message a file came with; sending it as another kind is a "type mismatch". */
export type FileKind = "document" | "photo";

/** One stored file. */
export interface StoredFile {
  readonly fileId: string;
  readonly fileUniqueId: string;
  readonly filePath: string;
  readonly kind: FileKind;
  readonly bytes: Buffer;
  readonly fileName: string | undefined;
  readonly mimeType: string | undefined;
  readonly width: number | undefined;
  readonly height: number | undefined;
}

/** Thrown by {@link FileStore.add} when the byte bound would be exceeded. */
export class StorageFullError extends Error {
  constructor(
    readonly requested: number,
    readonly stored: number,
    readonly limit: number,
  ) {
    super(
      `storing ${requested} more bytes would exceed maxFileStorageBytes (${stored} of ${limit} bytes in use)`,
    );
    this.name = "StorageFullError";
  }
}

const PREFIX: Readonly<Record<FileKind, string>> = {
  document: "BQACAgIAAxkBAA",
  photo: "AgACAgIAAxkBAA",
};

const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  json: "application/json",
  xml: "application/xml",
  html: "text/html",
  zip: "application/zip",
  gz: "application/gzip",
  tar: "application/x-tar",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  mp3: "audio/mpeg",
  ogg: "audio/ogg",
  mp4: "video/mp4",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
};

function extensionOf(fileName: string | undefined): string | undefined {
  const match = /\.([A-Za-z0-9]{1,8})$/.exec(fileName ?? "");
  return match?.[1]?.toLowerCase();
}

/**
 * The MIME type Telegram would report: the uploader's type unless it is the generic
 * octet-stream, else one guessed from the file name.
 */
export function guessMimeType(
  fileName: string | undefined,
  declared: string | undefined,
): string | undefined {
  const clean = declared?.split(";")[0]?.trim().toLowerCase() || undefined;
  if (clean !== undefined && clean !== "application/octet-stream") return clean;
  const extension = extensionOf(fileName);
  return (extension === undefined ? undefined : MIME_BY_EXTENSION[extension]) ?? clean;
}

/** Files of the simulator, bounded by total bytes. */
export class FileStore {
  readonly #byId = new Map<string, StoredFile>();
  readonly #byPath = new Map<string, StoredFile>();
  readonly #limit: number;
  #stored = 0;
  #sequence = 0;

  constructor(limitBytes: number) {
    this.#limit = limitBytes;
  }

  /** Bytes held now. */
  get storedBytes(): number {
    return this.#stored;
  }

  /** Files held now. */
  get count(): number {
    return this.#byId.size;
  }

  /** Stores bytes as a new file; throws {@link StorageFullError} beyond the bound. */
  add(
    kind: FileKind,
    bytes: Buffer,
    meta: {
      readonly fileName?: string | undefined;
      readonly mimeType?: string | undefined;
      readonly width?: number | undefined;
      readonly height?: number | undefined;
      readonly extension?: string | undefined;
    } = {},
  ): StoredFile {
    if (this.#stored + bytes.length > this.#limit) {
      throw new StorageFullError(bytes.length, this.#stored, this.#limit);
    }
    const sequence = ++this.#sequence;
    const tag = Buffer.alloc(6);
    tag.writeUIntBE(sequence, 0, 6);
    const fileId = `${PREFIX[kind]}${Buffer.concat([tag, randomBytes(18)]).toString("base64url")}`;
    const fileUniqueId = `AgAD${Buffer.concat([tag.subarray(2), randomBytes(5)]).toString("base64url")}`;
    const extension = meta.extension ?? extensionOf(meta.fileName);
    const folder = kind === "photo" ? "photos" : "documents";
    const filePath = `${folder}/file_${sequence}${extension === undefined ? "" : `.${extension}`}`;
    const file: StoredFile = Object.freeze({
      fileId,
      fileUniqueId,
      filePath,
      kind,
      bytes,
      fileName: meta.fileName,
      mimeType: meta.mimeType,
      width: meta.width,
      height: meta.height,
    });
    this.#byId.set(fileId, file);
    this.#byPath.set(filePath, file);
    this.#stored += bytes.length;
    return file;
  }

  /** The file with this file_id. */
  byId(fileId: string): StoredFile | undefined {
    return this.#byId.get(fileId);
  }

  /** The file at this file_path. */
  byPath(filePath: string): StoredFile | undefined {
    return this.#byPath.get(filePath);
  }

  /**
   * Whether a string has the shape of a file_id at all; the real server answers "invalid
   * file_id" for garbage and "wrong file_id or the file is temporarily unavailable" for an id of
   * the right shape that it does not know.
   */
  static looksLikeFileId(value: string): boolean {
    return /^[A-Za-z0-9_-]{24,}$/.test(value);
  }
}

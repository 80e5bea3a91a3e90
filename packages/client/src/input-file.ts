// A file to upload: bytes, a Blob, a stream, or a function that opens a stream. Knows whether it
// can be read again, because a 429 or a refused connection makes the client send it again.

import { basename } from "node:path";
import { ClientError } from "./errors.js";

/** What an {@link InputFile} can be made of. */
export type InputFileData =
  /** Bytes in memory (a Buffer is a Uint8Array). Repeatable. */
  | Uint8Array
  /** A Blob or File, e.g. `await fs.openAsBlob(path)`, streamed from disk. Repeatable. */
  | Blob
  /** A stream such as `fs.createReadStream(path)`. Readable once: a retry fails. */
  | AsyncIterable<Uint8Array>;

/** An {@link InputFileData}, or a function that produces one per attempt (repeatable). */
export type InputFileSource = InputFileData | (() => InputFileData | Promise<InputFileData>);

/** Options of {@link InputFile}. */
export interface InputFileOptions {
  /** The part's Content-Type. @defaultValue "application/octet-stream" */
  readonly contentType?: string | undefined;
}

/** An opened file: its bytes or a stream of them, and its size when known. */
export interface OpenedFile {
  readonly filename: string;
  readonly contentType: string;
  readonly size: number | undefined;
  readonly chunks: Uint8Array | AsyncIterable<Uint8Array>;
}

/**
 * A file to upload with `sendDocument`, `sendPhoto` or any method taking an InputFile.
 *
 * @example
 * await client.sendDocument(chatId, new InputFile(Buffer.from("hello"), "hello.txt"));
 * // Streamed from disk and safe to resend after a 429:
 * await client.sendDocument(chatId, new InputFile(() => fs.createReadStream(path), "big.zip"));
 */
export class InputFile {
  /** The file name Telegram shows (documents); `undefined` means one derived from the source. */
  readonly filename: string | undefined;
  /** Whether the file can be read more than once (everything but a bare stream). */
  readonly isRepeatable: boolean;
  readonly #source: InputFileSource;
  readonly #contentType: string;
  #streamStarted = false;

  constructor(source: InputFileSource, filename?: string, options: InputFileOptions = {}) {
    const isData =
      source instanceof Uint8Array ||
      source instanceof Blob ||
      typeof source === "function" ||
      (typeof source === "object" && source !== null && Symbol.asyncIterator in source);
    if (!isData) {
      throw new TypeError(
        "Expected `source` to be a Uint8Array, a Blob, an async iterable of Uint8Array or a function returning one",
      );
    }
    if (filename !== undefined && (typeof filename !== "string" || filename.length === 0)) {
      throw new TypeError(
        `Expected \`filename\` to be a non-empty string, got ${String(filename)}`,
      );
    }
    this.#source = source;
    this.filename = filename;
    this.#contentType = options.contentType ?? "application/octet-stream";
    this.isRepeatable = !(typeof source === "object" && Symbol.asyncIterator in source);
  }

  /**
   * Opens the file for one upload attempt (used by the client's multipart encoder).
   * @internal
   * @throws {ClientError} `ERR_UPLOAD_NOT_REPEATABLE` when a one-shot stream was already read.
   */
  async open(): Promise<OpenedFile> {
    const data = typeof this.#source === "function" ? await this.#source() : this.#source;
    const filename = this.filename ?? nameOf(data);
    const contentType = this.#contentType;
    if (data instanceof Uint8Array)
      return { filename, contentType, size: data.byteLength, chunks: data };
    if (data instanceof Blob) {
      return {
        filename,
        contentType:
          this.#contentType === "application/octet-stream" && data.type ? data.type : contentType,
        size: data.size,
        chunks: data.stream() as unknown as AsyncIterable<Uint8Array>,
      };
    }
    if (typeof this.#source !== "function") {
      if (this.#streamStarted) {
        throw new ClientError(
          "ERR_UPLOAD_NOT_REPEATABLE",
          `The stream of ${filename} was already read by an earlier attempt; pass a function that opens it to allow retries`,
        );
      }
      return { filename, contentType, size: undefined, chunks: this.#once(data) };
    }
    return { filename, contentType, size: undefined, chunks: data };
  }

  /** Marks a one-shot stream as used only when its first chunk is pulled. */
  async *#once(data: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
    this.#streamStarted = true;
    yield* data;
  }
}

function nameOf(data: InputFileData): string {
  if (typeof File !== "undefined" && data instanceof File && data.name) return data.name;
  const path = (data as { path?: unknown }).path;
  if (typeof path === "string" && path.length > 0) return basename(path);
  return "file";
}

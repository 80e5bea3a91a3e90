// Files on the Bot API side: sendDocument and sendPhoto (multipart upload, attach://, or an
// existing file_id) and getFile with Telegram's size limits.

import type { File, Message } from "@grammyjs/types";
import { parseReplyMarkup } from "../text/reply-markup.js";
import { ApiFailure, badRequest } from "../wire/api-failure.js";
import type { UploadedFile } from "../wire/request-params.js";
import {
  type FileKind,
  FileStore,
  guessMimeType,
  StorageFullError,
  type StoredFile,
} from "../world/file-store.js";
import { type ImageInfo, imageInfo } from "../world/image-size.js";
import {
  checkFlood,
  commitBotMessage,
  type MethodContext,
  replyTarget,
  withEntities,
} from "./bot-messages.js";
import { chatForBot } from "./chat-access.js";
import { captionText } from "./message-methods.js";

/** Largest upload the cloud Bot API accepts (50 MB). */
const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
/** Largest photo upload (10 MB). */
const MAX_PHOTO_BYTES = 10 * 1024 * 1024;
/** Largest file getFile hands out a download path for (20 MB). */
export const MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;

type InputFile = { readonly upload: UploadedFile } | { readonly stored: StoredFile };

/** Resolves the `document`/`photo` parameter: an uploaded part, attach://name or a file_id. */
function inputFile(ctx: MethodContext, field: string, noun: string): InputFile {
  const value = ctx.params.get(field);
  if (value !== undefined) {
    if (value.startsWith("attach://")) {
      const upload = ctx.params.file(value.slice("attach://".length));
      if (upload === undefined) throw badRequest(`there is no ${noun} in the request`);
      return { upload };
    }
    if (/^https?:\/\//i.test(value)) {
      // The simulator has no network to fetch from; Telegram words a failed fetch like this.
      throw badRequest("failed to get HTTP URL content");
    }
    const stored = ctx.world.files.byId(value.trim());
    if (stored === undefined) throw badRequest("wrong file identifier/HTTP URL specified");
    return { stored };
  }
  const upload = ctx.params.file(field);
  if (upload === undefined) throw badRequest(`there is no ${noun} in the request`);
  return { upload };
}

function storeUpload(
  ctx: MethodContext,
  kind: FileKind,
  upload: UploadedFile,
  meta: Parameters<FileStore["add"]>[2],
): StoredFile {
  try {
    const file = ctx.world.files.add(kind, upload.bytes, meta);
    ctx.world.counters.add("bytesUploaded", upload.bytes.length);
    return file;
  } catch (error) {
    if (error instanceof StorageFullError) {
      throw new ApiFailure(
        413,
        `Request Entity Too Large: the simulator's file storage is full (${error.message})`,
      );
    }
    throw error;
  }
}

function checkUploadSize(upload: UploadedFile): void {
  if (upload.bytes.length > MAX_UPLOAD_BYTES) throw new ApiFailure(413, "Request Entity Too Large");
  if (upload.bytes.length === 0) throw badRequest("file must be non-empty");
}

/** sendDocument */
export function sendDocument(ctx: MethodContext): Message {
  const input = inputFile(ctx, "document", "document");
  const caption = captionText(ctx);
  const markup = parseReplyMarkup(ctx.params.get("reply_markup"));
  const chat = chatForBot(ctx.world, ctx.bot, ctx.params.get("chat_id"), "write");
  const replyTo = replyTarget(ctx.params, chat);
  if ("stored" in input && input.stored.kind !== "document")
    throw badRequest("type of file mismatch");
  if ("upload" in input) checkUploadSize(input.upload);
  checkFlood(ctx, chat, "send");
  const file =
    "stored" in input
      ? input.stored
      : storeUpload(ctx, "document", input.upload, {
          fileName: input.upload.fileName || undefined,
          mimeType: guessMimeType(input.upload.fileName, input.upload.contentType),
        });
  const document: Record<string, unknown> = {
    file_id: file.fileId,
    file_unique_id: file.fileUniqueId,
  };
  if (file.fileName !== undefined) document.file_name = file.fileName;
  if (file.mimeType !== undefined) document.mime_type = file.mimeType;
  document.file_size = file.bytes.length;
  const content: Record<string, unknown> = { document };
  withEntities(content, "caption", caption.text, caption.entities);
  return commitBotMessage(ctx, chat, content, markup, replyTo);
}

/** sendPhoto */
export function sendPhoto(ctx: MethodContext): Message {
  const input = inputFile(ctx, "photo", "photo");
  const caption = captionText(ctx);
  const markup = parseReplyMarkup(ctx.params.get("reply_markup"));
  const chat = chatForBot(ctx.world, ctx.bot, ctx.params.get("chat_id"), "write");
  const replyTo = replyTarget(ctx.params, chat);
  let file: StoredFile | undefined;
  let pending: { readonly upload: UploadedFile; readonly info: ImageInfo } | undefined;
  if ("stored" in input) {
    if (input.stored.kind !== "photo") throw badRequest("type of file mismatch");
    file = input.stored;
  } else {
    checkUploadSize(input.upload);
    if (input.upload.bytes.length > MAX_PHOTO_BYTES) throw badRequest("PHOTO_SAVE_FILE_INVALID");
    const info = imageInfo(input.upload.bytes);
    if (info === undefined) throw badRequest("IMAGE_PROCESS_FAILED");
    const ratio = Math.max(info.width, info.height) / Math.min(info.width, info.height);
    if (info.width + info.height > 10_000 || ratio > 20) {
      throw badRequest("PHOTO_INVALID_DIMENSIONS");
    }
    pending = { upload: input.upload, info };
  }
  checkFlood(ctx, chat, "send");
  if (pending !== undefined) {
    file = storeUpload(ctx, "photo", pending.upload, {
      width: pending.info.width,
      height: pending.info.height,
      extension: pending.info.extension,
    });
  }
  const photo = file as StoredFile;
  const content: Record<string, unknown> = {
    photo: [
      {
        file_id: photo.fileId,
        file_unique_id: photo.fileUniqueId,
        width: photo.width ?? 0,
        height: photo.height ?? 0,
        file_size: photo.bytes.length,
      },
    ],
  };
  withEntities(content, "caption", caption.text, caption.entities);
  return commitBotMessage(ctx, chat, content, markup, replyTo);
}

/** getFile */
export function getFile(ctx: MethodContext): File {
  const fileId = ctx.params.text("file_id").trim();
  if (fileId.length === 0) throw badRequest("file_id not specified");
  const file = ctx.world.files.byId(fileId);
  if (file === undefined) {
    throw badRequest(
      FileStore.looksLikeFileId(fileId)
        ? "wrong file_id or the file is temporarily unavailable"
        : "invalid file_id",
    );
  }
  if (file.bytes.length > MAX_DOWNLOAD_BYTES) throw badRequest("file is too big");
  return {
    file_id: file.fileId,
    file_unique_id: file.fileUniqueId,
    file_size: file.bytes.length,
    file_path: file.filePath,
  };
}

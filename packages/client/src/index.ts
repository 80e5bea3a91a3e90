// What a client user matches on and names, so one import serves them; these are the very classes
// and types of @telepace/outbox (the same identity for `instanceof`).
export {
  type ChatId,
  ChatMigratedError,
  ForbiddenError,
  type MessageStream,
  NetworkError,
  type NetworkFailure,
  OutboxError,
  type OutboxErrorCode,
  type OutboxOutcome,
  Priority,
  RetryAfterError,
  RetryAfterTooLongError,
  type StreamMessageOptions,
  type StreamOutcome,
  StreamRegistry,
  type StreamSource,
  splitMessageText,
  TelegramApiError,
  unwrapOutcome,
  writeKeys,
} from "@telepace/outbox";
export type {
  ByteRange,
  FileDownload,
  RequestOptions,
} from "./bot-api-http.js";
export { TelegramClient } from "./client.js";
export type {
  ClientCloseOptions,
  ClientOutboxOptions,
  DownloadOptions,
  MethodName,
  MethodParams,
  MethodResult,
  ScheduleOptions,
  SendMessageOptions,
  SendOutcome,
  TelegramClientOptions,
  WriteOptions,
  WriteOutcome,
} from "./client-options.js";
export { clientDefaults } from "./defaults.js";
export {
  ClientError,
  type ClientErrorCode,
  type ReadRetryLimit,
  type ReadRetryLimitDetails,
  ReadRetryLimitError,
  TextTooLongError,
} from "./errors.js";
export {
  InputFile,
  type InputFileData,
  type InputFileOptions,
  type InputFileSource,
} from "./input-file.js";

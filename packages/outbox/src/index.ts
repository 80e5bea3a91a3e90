export { type ChatId, chatKeyOf } from "./chat.js";
export {
  classifyFailure,
  type FailureClassifier,
  type FailureContext,
  type FailureVerdict,
} from "./classify.js";
export { isConnectFailure, networkErrorCode } from "./connect-failure.js";
export { outboxDefaults } from "./defaults.js";
export {
  ChatMigratedError,
  ForbiddenError,
  NetworkError,
  type NetworkErrorDetails,
  type NetworkFailure,
  OutboxError,
  type OutboxErrorCode,
  RetryAfterError,
  type RetryAfterErrorOptions,
  RetryAfterTooLongError,
  TelegramApiError,
  type TelegramApiErrorDetails,
} from "./errors.js";
export {
  type OutboxEvent,
  type OutboxEventBase,
  type OutboxEventType,
  outboxChannels,
} from "./events.js";
export { type EnqueueOptions, type OutboxOperation, Priority } from "./operation.js";
export {
  type OutboxChatSnapshot,
  type OutboxCloseOptions,
  type OutboxCounters,
  type OutboxSnapshot,
  TelegramOutbox,
  type TelegramOutboxOptions,
} from "./outbox.js";
export { outboxOptionNames } from "./outbox-options.js";
export {
  type OutboxClosed,
  type OutboxDelivered,
  type OutboxFailed,
  type OutboxNotModified,
  type OutboxOutcome,
  type OutboxRejected,
  type OutboxSuperseded,
  unwrapOutcome,
} from "./outcome.js";
export {
  type FreezeListener,
  MemoryPacingStore,
  type MemoryPacingStoreOptions,
  type PacingDecision,
  type PacingDenial,
  type PacingRequest,
  type PacingStore,
} from "./pacing-store.js";
export { retryAfterFrom, retryAfterSecondsToMs } from "./retry-after.js";
export { MessageStream } from "./streaming/message-stream.js";
export { type TextFormat, visibleLength } from "./streaming/message-text.js";
export {
  MESSAGE_TEXT_LIMIT,
  type SplitOptions,
  splitMessageText,
  type TextChunk,
} from "./streaming/split-text.js";
export {
  type StreamMessageOptions,
  type StreamMethod,
  type StreamRegistryOptions,
  type StreamTransport,
  streamDefaults,
} from "./streaming/stream-options.js";
export type {
  StreamClosed,
  StreamDelivered,
  StreamEmpty,
  StreamFailed,
  StreamMode,
  StreamOutcome,
  StreamOutcomeBase,
} from "./streaming/stream-outcome.js";
export {
  type StreamPiece,
  StreamRegistry,
  type StreamRegistrySnapshot,
  type StreamSource,
} from "./streaming/stream-registry.js";
export type { MessageStreamSnapshot, ReplaceOptions } from "./streaming/stream-view.js";
export {
  classOfMethod,
  type MethodClass,
  type MethodName,
  methodClasses,
  type WriteMethodName,
} from "./writes/method-classes.js";
export { replacingProgress } from "./writes/replace-progress.js";
export { type WriteTarget, writeKeys } from "./writes/write-keys.js";
export { planWrite, type WritePlan, writeOperation } from "./writes/write-plan.js";

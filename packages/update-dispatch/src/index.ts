export {
  type UpdateDispatchEvent,
  updateDispatchChannels,
} from "./dispatcher/diagnostics.js";
export { type KeyKind, principalKeyOf } from "./dispatcher/dispatch-key.js";
export {
  type CloseOptions,
  type DrainOptions,
  type EnqueueOptions,
  type UpdateDispatcherOptions,
  type UpdateProcessor,
  updateDispatcherDefaults,
} from "./dispatcher/options.js";
export type {
  CloseResult,
  DrainResult,
  EnqueueResult,
  ProcessOutcome,
  RejectReason,
} from "./dispatcher/results.js";
export type { UpdateDispatchSnapshot } from "./dispatcher/snapshot.js";
export { UpdateDispatcher } from "./dispatcher/update-dispatcher.js";
export {
  PollingStoppedError,
  UpdateDispatchError,
  type UpdateDispatchErrorCode,
} from "./errors.js";
export { type UpdateIntakeEvent, updateIntakeChannels } from "./intake/diagnostics.js";
export {
  type AcceptOptions,
  type IntakeCloseOptions,
  type IntakeDispatcherOptions,
  type RunOptions,
  type UpdateIntakeOptions,
  updateIntakeDefaults,
} from "./intake/options.js";
export type { GetUpdatesErrorFields } from "./intake/polling-failure.js";
export {
  type PollingEvent,
  PollingLoop,
  type PollingLoopOptions,
  type PollingLoopSnapshot,
  type PollingState,
  type PollingStore,
} from "./intake/polling-loop.js";
export {
  type AllowedUpdate,
  type GetUpdates,
  type GetUpdatesParams,
  type JournalFailurePolicy,
  type PollingOptions,
  pollingDefaults,
} from "./intake/polling-options.js";
export type {
  AcceptResult,
  IntakeCloseResult,
  IntakeState,
  UpdateIntakeSnapshot,
} from "./intake/results.js";
export { UpdateIntake } from "./intake/update-intake.js";
export type {
  WebhookBody,
  WebhookHandlerSnapshot,
  WebhookIntake,
  WebhookOutcome,
  WebhookRequest,
  WebhookResponse,
} from "./intake/webhook-core.js";
export type { ExpressWebhookRequest } from "./intake/webhook-express.js";
export type {
  FastifyWebhookReply,
  FastifyWebhookRequest,
  FastifyWebhookRoute,
} from "./intake/webhook-fastify.js";
export { type WebhookHandler, webhookHandler } from "./intake/webhook-handler.js";
export type { NodeWebhookRequest, NodeWebhookResponse } from "./intake/webhook-node.js";
export {
  type WebhookHandlerOptions,
  webhookHandlerDefaults,
  webhookHandlerOptionNames,
} from "./intake/webhook-options.js";
export {
  MemoryUpdateJournal,
  type MemoryUpdateJournalOptions,
  memoryUpdateJournalDefaults,
} from "./journal/memory-journal.js";
export type {
  AppendResult,
  JournalSnapshot,
  JournalStateValue,
  UpdateJournal,
} from "./journal/update-journal.js";

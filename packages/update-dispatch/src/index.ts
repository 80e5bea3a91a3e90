export {
  type UpdateDispatchEvent,
  updateDispatchChannels,
} from "./diagnostics.js";
export type { KeyKind } from "./dispatch-key.js";
export {
  PollingStoppedError,
  UpdateDispatchError,
  type UpdateDispatchErrorCode,
} from "./errors.js";
export { type UpdateIntakeEvent, updateIntakeChannels } from "./intake-diagnostics.js";
export {
  type AcceptOptions,
  type AllowedUpdate,
  type GetUpdates,
  type GetUpdatesParams,
  type IntakeCloseOptions,
  type IntakeDispatcherOptions,
  type RunOptions,
  type UpdateIntakeOptions,
  updateIntakeDefaults,
} from "./intake-options.js";
export type {
  AcceptResult,
  IntakeCloseResult,
  IntakeState,
  UpdateIntakeSnapshot,
} from "./intake-results.js";
export {
  MemoryUpdateJournal,
  type MemoryUpdateJournalOptions,
  memoryUpdateJournalDefaults,
} from "./memory-journal.js";
export {
  type CloseOptions,
  type DrainOptions,
  type EnqueueOptions,
  type UpdateDispatcherOptions,
  type UpdateDispatchLogger,
  type UpdateProcessor,
  updateDispatcherDefaults,
} from "./options.js";
export type { GetUpdatesErrorFields } from "./polling-failure.js";
export type {
  CloseResult,
  DrainResult,
  EnqueueResult,
  ProcessOutcome,
  RejectReason,
} from "./results.js";
export type {
  UpdateDispatchSnapshot,
  UpdateDispatchStats,
} from "./snapshot.js";
export { UpdateDispatcher } from "./update-dispatcher.js";
export { UpdateIntake } from "./update-intake.js";
export type {
  AppendResult,
  JournalSnapshot,
  JournalStateValue,
  UpdateJournal,
} from "./update-journal.js";

export {
  type UpdateDispatchEvent,
  updateDispatchChannels,
} from "./diagnostics.js";
export type { KeyKind } from "./dispatch-key.js";
export { UpdateDispatchError, type UpdateDispatchErrorCode } from "./errors.js";
export {
  type CloseOptions,
  type DrainOptions,
  type EnqueueOptions,
  type UpdateDispatcherOptions,
  type UpdateDispatchLogger,
  type UpdateProcessor,
  updateDispatcherDefaults,
} from "./options.js";
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
export type {
  AppendResult,
  JournalSnapshot,
  JournalStateValue,
  UpdateJournal,
} from "./update-journal.js";

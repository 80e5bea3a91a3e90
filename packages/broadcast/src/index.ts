export { Broadcast, type BroadcastParts } from "./broadcast.js";
export type { BroadcastSnapshot } from "./broadcast-snapshot.js";
export { BroadcastError, type BroadcastErrorCode } from "./errors.js";
export {
  type BroadcastEvent,
  type BroadcastEventType,
  type BroadcastMode,
  type BroadcastReport,
  type BroadcastRunState,
  broadcastChannels,
} from "./events.js";
export {
  type BroadcastJournal,
  type BroadcastJson,
  JournalBroadcastStore,
} from "./journal-store.js";
export { MemoryBroadcastStore } from "./memory-store.js";
export {
  BROADCAST_METHODS,
  type BroadcastMessage,
  type BroadcastMethod,
  type BroadcastParams,
} from "./message.js";
export {
  type BroadcastClient,
  type BroadcastRegistryOptions,
  type BroadcastTransport,
  broadcastDefaults,
  type StartBroadcastOptions,
} from "./options.js";
export {
  type BroadcastCounts,
  decodeRecord,
  encodeSettled,
  type PositionRecord,
  RECIPIENT_OUTCOMES,
  type RecipientOutcome,
  type SettledPosition,
  STARTED,
} from "./outcome.js";
export type { RecipientSource } from "./recipients.js";
export {
  type BroadcastCloseOptions,
  BroadcastRegistry,
  type BroadcastRegistrySnapshot,
} from "./registry.js";
export type {
  BatchClaim,
  BroadcastDefinition,
  BroadcastRecord,
  BroadcastState,
  BroadcastStore,
  ClaimResult,
} from "./store.js";

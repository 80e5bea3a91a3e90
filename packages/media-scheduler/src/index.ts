export { mediaChargeUnitBytes } from "./charge.js";
export { MediaSchedulerError, type MediaSchedulerErrorCode } from "./errors.js";
export {
  type MediaEvictEvent,
  type MediaGrantEvent,
  type MediaRebindEvent,
  type MediaReleaseEvent,
  type MediaSchedulerEvent,
  mediaSchedulerChannels,
} from "./events.js";
export type { MediaDc, MediaDirection, MediaPriority, MediaSizeClass } from "./kinds.js";
export {
  type MediaDirectionLimits,
  type MediaSchedulerLimits,
  type MediaSchedulerRegistryOptions,
  mediaSchedulerDefaults,
  type ResolvedDirectionLimits,
  type ResolvedLimits,
} from "./options.js";
export type { MediaPermit } from "./permit.js";
export {
  type CloseOptions,
  MediaSchedulerRegistry,
  type OpenTransferOptions,
} from "./registry.js";
export type {
  MediaBindingState,
  MediaSchedulerCounters,
  MediaSchedulerRegistrySnapshot,
  MediaSchedulerSnapshot,
  MediaSchedulerTransferSnapshot,
  MediaTransferSnapshot,
} from "./snapshot.js";
export type { MediaAcquireOptions, MediaTransfer } from "./transfer.js";

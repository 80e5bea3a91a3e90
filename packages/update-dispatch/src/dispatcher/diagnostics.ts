// Typed dispatch events on node:diagnostics_channel, for metrics and tracing without a dependency.
// Events carry safe metadata only: update ids, key kinds, reasons, outcomes and durations.

import { channelNames, createChannels, createPublisher } from "@telepace/core";
import type { KeyKind } from "./dispatch-key.js";
import type { ProcessOutcome, RejectReason } from "./results.js";

/**
 * The channel names the dispatcher publishes on (`telepace:update-dispatch:<event>`); subscribe
 * with `diagnostics_channel.subscribe(name, listener)`.
 */
export const updateDispatchChannels = channelNames("update-dispatch", [
  "accepted",
  "rejected",
  "started",
  "finished",
] as const);

/**
 * A message on one of {@link updateDispatchChannels}. `updateId` is `null` when the update had no
 * valid `update_id`; durations are clock milliseconds.
 */
export type UpdateDispatchEvent =
  | {
      readonly type: "accepted";
      readonly updateId: number | null;
      readonly keyKind: KeyKind;
    }
  | {
      readonly type: "rejected";
      readonly updateId: number | null;
      readonly reason: RejectReason;
    }
  | {
      readonly type: "started";
      readonly updateId: number | null;
      readonly keyKind: KeyKind;
      /** From `enqueue` to the processor call. */
      readonly waitedMs: number;
    }
  | {
      readonly type: "finished";
      readonly updateId: number | null;
      readonly keyKind: KeyKind;
      readonly outcome: ProcessOutcome;
      /** From the processor call to the outcome. */
      readonly durationMs: number;
    };

/** Publishes an event, built and frozen only when its channel has a subscriber. */
export const publish = createPublisher<UpdateDispatchEvent>(updateDispatchChannels);

/**
 * The channels themselves, for the per-update path: it checks `hasSubscribers` before building
 * an event, so a dispatcher nobody observes allocates nothing for diagnostics.
 */
export const channels = createChannels(updateDispatchChannels);

/**
 * Whether anybody listens for timings: the dispatcher reads its clock for an update only then,
 * since `started` and `finished` are the only users of those readings.
 */
export function isTimed(): boolean {
  return channels.started.hasSubscribers || channels.finished.hasSubscribers;
}

// The scheduler's typed events, published on node:diagnostics_channel channels named
// `telepace:media-scheduler:<event>`; nothing is built when nobody subscribes.

import { channelNames, createPublisher } from "@telepace/core";
import type { MediaDc, MediaDirection, MediaPriority } from "./kinds.js";

/** A permit was granted. */
export interface MediaGrantEvent {
  readonly type: "grant";
  readonly dc: MediaDc;
  readonly direction: MediaDirection;
  readonly transferId: string;
  /** Sequence number of the permit within the registry. */
  readonly permitId: number;
  readonly priority: MediaPriority;
  /** Bytes asked for. */
  readonly bytes: number;
  /** Bytes charged (rounded up to 64 KiB). */
  readonly chargedBytes: number;
  /** Milliseconds between the acquire and the grant, by the registry's clock. */
  readonly waitedMs: number;
  /** The scheduler's active bytes after this grant. */
  readonly activeBytes: number;
  /** The scheduler's budget when the grant was made. */
  readonly maxBytesInFlight: number;
}

/** A permit's charge returned to its scheduler (exactly once per grant). */
export interface MediaReleaseEvent {
  readonly type: "release";
  readonly dc: MediaDc;
  readonly direction: MediaDirection;
  readonly transferId: string;
  readonly permitId: number;
  readonly chargedBytes: number;
  /** Milliseconds the permit was held. */
  readonly heldMs: number;
  /** The scheduler's active bytes after this release. */
  readonly activeBytes: number;
}

/** A transfer moved to another data centre. */
export interface MediaRebindEvent {
  readonly type: "rebind";
  readonly direction: MediaDirection;
  readonly transferId: string;
  readonly fromDc: MediaDc;
  readonly toDc: MediaDc;
  /** Waiting acquires that moved with it. */
  readonly movedRequests: number;
  /** Live permits left to drain at `fromDc`. */
  readonly drainingPermits: number;
}

/** A scheduler left the registry after it fully drained. */
export interface MediaEvictEvent {
  readonly type: "evict";
  readonly dc: MediaDc;
  readonly direction: MediaDirection;
  /** Grants the scheduler made over its life. */
  readonly grants: number;
}

/** Every event the package publishes (a closed union). */
export type MediaSchedulerEvent =
  | MediaGrantEvent
  | MediaReleaseEvent
  | MediaRebindEvent
  | MediaEvictEvent;

/** The `node:diagnostics_channel` channel name of each event type. */
export const mediaSchedulerChannels = channelNames("media-scheduler", [
  "grant",
  "release",
  "rebind",
  "evict",
] as const satisfies readonly MediaSchedulerEvent["type"][]);

/** Publishes an event, building it only when its channel has subscribers. @internal */
export const publish = createPublisher<MediaSchedulerEvent>(mediaSchedulerChannels);

// The diagnostics_channel names this package listens on, built from the
// `telepace:<package>:<event>` convention so that listening never loads the packages that publish
// (this package does not depend on them); type checks keep each list equal to the package's own
// event union.

import diagnosticsChannel from "node:diagnostics_channel";
import { channelNames } from "@telepace/core";
import type { MediaSchedulerEvent } from "@telepace/media-scheduler";
import type { OutboxEvent } from "@telepace/outbox";
import type { UpdateDispatchEvent, UpdateIntakeEvent } from "@telepace/update-dispatch";

/** `@telepace/outbox`'s channels (equal to its `outboxChannels`). */
export const outboxChannelNames = channelNames("outbox", [
  "enqueued",
  "coalesced",
  "superseded",
  "started",
  "rate-limited",
  "retry-scheduled",
  "settled",
] as const satisfies readonly OutboxEvent["type"][]);

/** `@telepace/update-dispatch`'s dispatcher channels (equal to its `updateDispatchChannels`). */
export const dispatchChannelNames = channelNames("update-dispatch", [
  "accepted",
  "rejected",
  "started",
  "finished",
] as const satisfies readonly UpdateDispatchEvent["type"][]);

/** `@telepace/update-dispatch`'s intake channels (equal to its `updateIntakeChannels`). */
export const intakeChannelNames = channelNames("update-dispatch", [
  "intake-polled",
  "intake-stored",
  "intake-replayed",
  "intake-paused",
  "intake-resumed",
  "intake-backoff",
  "intake-ids-restarted",
  "intake-journal-failed",
  "intake-journal-recovered",
  "intake-stopped",
] as const satisfies readonly UpdateIntakeEvent["type"][]);

/** `@telepace/media-scheduler`'s channels (equal to its `mediaSchedulerChannels`). */
export const mediaChannelNames = channelNames("media-scheduler", [
  "grant",
  "release",
  "rebind",
  "evict",
] as const satisfies readonly MediaSchedulerEvent["type"][]);

/** A listener per event type of a union `E`; types without one are not subscribed to. */
export type EventHandlers<E extends { readonly type: string }> = {
  readonly [T in E["type"]]?: (event: Extract<E, { readonly type: T }>) => void;
};

/**
 * Subscribes each handler to its event's channel; returns the function that unsubscribes them all
 * (idempotent).
 */
export function subscribeEvents<E extends { readonly type: string }>(
  names: Readonly<Record<E["type"], string>>,
  handlers: EventHandlers<E>,
): () => void {
  const subscribed: [string, (message: unknown) => void][] = [];
  for (const [type, handler] of Object.entries(handlers) as [E["type"], (event: E) => void][]) {
    const listener = (message: unknown): void => handler(message as E);
    diagnosticsChannel.subscribe(names[type], listener);
    subscribed.push([names[type], listener]);
  }
  return () => {
    for (const [name, listener] of subscribed.splice(0)) {
      diagnosticsChannel.unsubscribe(name, listener);
    }
  };
}

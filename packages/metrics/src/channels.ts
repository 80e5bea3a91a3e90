// The diagnostics_channel names this package listens on, built from the
// `telepace:<package>:<event>` convention so that listening never loads the packages that publish
// (this package does not depend on them); the compiler keeps each list equal to the package's own
// event union.

import diagnosticsChannel from "node:diagnostics_channel";
import { channelNames } from "@telepace/core";
import type { MediaSchedulerEvent } from "@telepace/media-scheduler";
import type { OutboxEvent } from "@telepace/outbox";
import type { UpdateDispatchEvent, UpdateIntakeEvent } from "@telepace/update-dispatch";

/**
 * The event types of a union, given as an object literal typed `Record<Union, true>`: a missing
 * type and one the union lacks are both compile errors (a `satisfies` on an array accepts a
 * subset).
 */
function everyType<Union extends string>(types: Readonly<Record<Union, true>>): Union[] {
  return Object.keys(types) as Union[];
}

/** `@telepace/outbox`'s channels (equal to its `outboxChannels`). */
export const outboxChannelNames = channelNames(
  "outbox",
  everyType<OutboxEvent["type"]>({
    enqueued: true,
    coalesced: true,
    superseded: true,
    started: true,
    "rate-limited": true,
    "retry-scheduled": true,
    settled: true,
  }),
);

/** `@telepace/update-dispatch`'s dispatcher channels (equal to its `updateDispatchChannels`). */
export const dispatchChannelNames = channelNames(
  "update-dispatch",
  everyType<UpdateDispatchEvent["type"]>({
    accepted: true,
    rejected: true,
    started: true,
    finished: true,
  }),
);

/** `@telepace/update-dispatch`'s intake channels (equal to its `updateIntakeChannels`). */
export const intakeChannelNames = channelNames(
  "update-dispatch",
  everyType<UpdateIntakeEvent["type"]>({
    "intake-polled": true,
    "intake-stored": true,
    "intake-replayed": true,
    "intake-paused": true,
    "intake-resumed": true,
    "intake-backoff": true,
    "intake-ids-restarted": true,
    "intake-journal-failed": true,
    "intake-journal-recovered": true,
    "intake-stopped": true,
  }),
);

/** `@telepace/media-scheduler`'s channels (equal to its `mediaSchedulerChannels`). */
export const mediaChannelNames = channelNames(
  "media-scheduler",
  everyType<MediaSchedulerEvent["type"]>({
    grant: true,
    release: true,
    rebind: true,
    evict: true,
  }),
);

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

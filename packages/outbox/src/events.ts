// Observability: a closed union of outbox events, published on node:diagnostics_channel channels
// named `telepace:outbox:<event>`. Events carry keys and chat ids, never payloads.

import { channelNames, createPublisher } from "@telepace/core";
import type { OutboxOutcome } from "./outcome.js";

/** What every {@link OutboxEvent} carries. */
export interface OutboxEventBase {
  /** The op's key, or `undefined` for a unique (never coalesced) op. */
  readonly key: string | undefined;
  /** The chat's pacing key (see `chatKeyOf`), or `undefined` for an op without a chat. */
  readonly chat: string | undefined;
}

/** Everything the outbox reports. */
export type OutboxEvent =
  | (OutboxEventBase & { readonly type: "enqueued"; readonly priority: number })
  | (OutboxEventBase & { readonly type: "coalesced"; readonly priority: number })
  | (OutboxEventBase & { readonly type: "superseded"; readonly reason: "coalesced" | "dropped" })
  | (OutboxEventBase & {
      readonly type: "started";
      /** Which attempt this is, from 1. */
      readonly attempt: number;
      /**
       * Milliseconds from the op's enqueue to this start, on the outbox's clock. A coalesced op
       * counts from the enqueue of the op whose place in line it took, and a retried one from its
       * first enqueue, so on attempt 1 this is the op's queue wait.
       */
      readonly waitedMs: number;
    })
  | (OutboxEventBase & {
      readonly type: "rate-limited";
      readonly retryAfterMs: number;
      readonly scope: "chat" | "global";
    })
  | (OutboxEventBase & {
      readonly type: "retry-scheduled";
      readonly attempt: number;
      readonly delayMs: number;
      readonly reason: "rate-limited" | "transient";
    })
  | (OutboxEventBase & {
      readonly type: "settled";
      readonly status: OutboxOutcome<unknown>["status"] | "aborted";
      readonly attempts: number;
      /** The failure's `code` (or `name`) when it has one. */
      readonly error: string | undefined;
    });

/** The type names of {@link OutboxEvent}. */
export type OutboxEventType = OutboxEvent["type"];

/**
 * The diagnostics_channel name of each event.
 *
 * @example
 * import diagnosticsChannel from "node:diagnostics_channel";
 * diagnosticsChannel.subscribe(outboxChannels["rate-limited"], (event) => metrics.inc(event));
 */
export const outboxChannels: Readonly<Record<OutboxEventType, string>> = channelNames("outbox", [
  "enqueued",
  "coalesced",
  "superseded",
  "started",
  "rate-limited",
  "retry-scheduled",
  "settled",
]);

/** Publishes an event; builds nothing when no one listens. */
export const publish = createPublisher<OutboxEvent>(outboxChannels);

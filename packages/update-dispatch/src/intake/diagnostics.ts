// Typed intake events on node:diagnostics_channel (`telepace:update-dispatch:intake-*`), next to
// the dispatcher's own channels. Events carry counts, offsets, codes and durations only.

import { channelNames, createPublisher } from "@telepace/core";

/**
 * A message on one of {@link updateIntakeChannels}. Durations and delays are clock
 * milliseconds; `errorCode` is Telegram's code when the failure had one.
 */
export type UpdateIntakeEvent =
  | {
      /** A getUpdates call returned. `offset` is what it confirmed (`null`: none sent). */
      readonly type: "intake-polled";
      readonly offset: number | null;
      readonly received: number;
      readonly durationMs: number;
    }
  | {
      /** The journal stored a batch (from a poll) or one update (from `accept`). */
      readonly type: "intake-stored";
      readonly source: "poll" | "webhook";
      readonly appended: number;
      readonly duplicates: number;
    }
  | {
      /** Unfinished updates from the journal were handed to the dispatcher at start. */
      readonly type: "intake-replayed";
      readonly count: number;
    }
  | {
      /** `maxUnfinished` was reached: fetching stops until processing frees room. */
      readonly type: "intake-paused";
      readonly unfinished: number;
    }
  | {
      /** Room again after a pause. */
      readonly type: "intake-resumed";
      readonly unfinished: number;
      readonly pausedMs: number;
    }
  | {
      /** Polling waits before asking again: a 429, a transient failure, or a failed append. */
      readonly type: "intake-backoff";
      readonly reason: "rate-limited" | "transient" | "journal";
      readonly delayMs: number;
      readonly errorCode: number | null;
    }
  | {
      /** The polling loop ended: its signal or `close()`, or a {@link PollingStoppedError}. */
      readonly type: "intake-stopped";
      readonly reason: "aborted" | "closed" | "conflict" | "unauthorized";
    };

/** The channel names the intake publishes on; subscribe with `diagnostics_channel.subscribe`. */
export const updateIntakeChannels = channelNames<UpdateIntakeEvent["type"]>("update-dispatch", [
  "intake-polled",
  "intake-stored",
  "intake-replayed",
  "intake-paused",
  "intake-resumed",
  "intake-backoff",
  "intake-stopped",
]);

/** Publishes an intake event, building it only when someone listens. */
export const publishIntakeEvent = createPublisher<UpdateIntakeEvent>(updateIntakeChannels);

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
      /**
       * The update ids restarted lower (a new numbering, as Telegram picks after a week without
       * updates): the old ids were forgotten once the old numbering's unfinished updates had
       * finished. `source`: a poll's answer held an id below its offset, a short probe without
       * an offset did, or a webhook update started a new numbering (at or below the highest
       * stored id after a week without updates, or far below it). `offset` is the old
       * numbering's next offset (highest stored + 1); `waitedMs` how long unfinished updates held
       * the restart back.
       */
      readonly type: "intake-ids-restarted";
      readonly source: "poll" | "probe" | "webhook";
      readonly offset: number | null;
      readonly waitedMs: number;
    }
  | {
      /** The journal failed (an append, a finish or a restart of ids): an outage begins. */
      readonly type: "intake-journal-failed";
      /** The error's short machine code (`ERR_JOURNAL_IO`, `ENOSPC`…), when it has one. */
      readonly code: string | null;
    }
  | {
      /** The journal worked again after an outage of `outageMs`, with `failures` failed calls. */
      readonly type: "intake-journal-recovered";
      readonly outageMs: number;
      readonly failures: number;
    }
  | {
      /**
       * The polling loop ended: its signal or `close()`, a {@link PollingStoppedError}, or a
       * failed store with `journalFailure: "reject"`.
       */
      readonly type: "intake-stopped";
      readonly reason: "aborted" | "closed" | "conflict" | "unauthorized" | "journal";
    };

/** The channel names the intake publishes on; subscribe with `diagnostics_channel.subscribe`. */
export const updateIntakeChannels = channelNames<UpdateIntakeEvent["type"]>("update-dispatch", [
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
]);

/** Publishes an intake event, building it only when someone listens. */
export const publishIntakeEvent = createPublisher<UpdateIntakeEvent>(updateIntakeChannels);

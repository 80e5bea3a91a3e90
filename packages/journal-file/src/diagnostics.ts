// Typed journal events on node:diagnostics_channel (`telepace:journal-file:<event>`), for metrics
// without a dependency. Events carry sizes, counts and codes only, never updates or state.

import { channelNames, createPublisher } from "@telepace/core";

/**
 * The channel names the journal publishes on; subscribe with
 * `diagnostics_channel.subscribe(name, listener)`.
 */
export const journalFileChannels = channelNames("journal-file", [
  "opened",
  "written",
  "compacted",
  "failed",
  "resumed",
] as const);

/** A message on one of {@link journalFileChannels}. */
export type JournalFileEvent =
  | {
      readonly type: "opened";
      readonly directory: string;
      /** Log size after recovery, in bytes. */
      readonly fileBytes: number;
      readonly records: number;
      /** Bytes of a torn tail cut off (0: the log ended cleanly). */
      readonly cutBytes: number;
      /** The pid of a dead process whose lock was taken over, or `null`. */
      readonly takenOverFrom: number | null;
    }
  | {
      readonly type: "written";
      readonly directory: string;
      /** Bytes in this write (a group of records). */
      readonly bytes: number;
      readonly records: number;
      /** Whether the write was followed by fdatasync. */
      readonly isSynced: boolean;
    }
  | {
      readonly type: "compacted";
      readonly directory: string;
      readonly beforeBytes: number;
      readonly afterBytes: number;
    }
  | {
      readonly type: "failed";
      readonly directory: string;
      /** `ERR_JOURNAL_IO` with the system error's code (`EIO`, `ENOSPC`…), when it has one. */
      readonly code: string;
      readonly systemCode: string | null;
    }
  | {
      /** The journal writes again after an outage (one or more `failed` events). */
      readonly type: "resumed";
      readonly directory: string;
      /** From the first failure of the outage to the write of the new log, on the clock. */
      readonly outageMs: number;
      /** Failures during the outage: the first one and every attempt to resume that failed. */
      readonly failures: number;
      /** Size of the new log, in bytes. */
      readonly fileBytes: number;
    };

/** Publishes a {@link JournalFileEvent}, building it only when the channel has subscribers. */
export const publish = createPublisher<JournalFileEvent>(journalFileChannels);

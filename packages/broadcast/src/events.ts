// Observability: the closed union of broadcast events on node:diagnostics_channel channels named
// `telepace:broadcast:<event>`. Events carry ids, positions, chat ids and outcomes, never a message.

import { channelNames, createPublisher } from "@telepace/core";
import type { ChatId } from "@telepace/outbox";
import type { BroadcastCounts, RecipientOutcome } from "./outcome.js";

/** How a broadcast's sends are paced: free (30/s), paid (1000/s), or paid refused and free again. */
export type BroadcastMode = "free" | "paid" | "paid-refused";

/** The state of a broadcast as this process runs it. */
export type BroadcastRunState =
  | "starting"
  | "running"
  | "paused"
  | "completed"
  | "cancelled"
  | "failed"
  | "interrupted";

/** Everything a broadcast reports. */
export type BroadcastEvent =
  | {
      readonly type: "started";
      readonly id: string;
      /** It existed in the store: this run resumes it (or joins other processes running it). */
      readonly resumed: boolean;
      readonly mode: BroadcastMode;
      readonly total: number | undefined;
    }
  | {
      readonly type: "batch";
      readonly id: string;
      readonly batch: number;
      readonly from: number;
      readonly to: number;
      /** `claimed` (`takenOver`: from a process that died or paused), `completed`, `released`, `lost`. */
      readonly action: "claimed" | "completed" | "released" | "lost";
      readonly takenOver: boolean;
    }
  | {
      readonly type: "settled";
      readonly id: string;
      readonly position: number;
      readonly chatId: ChatId | undefined;
      readonly outcome: RecipientOutcome;
      readonly migrated: boolean;
      /** Sent again after a crash had cut its first send off in flight. */
      readonly resent: boolean;
    }
  | {
      readonly type: "paid-refused";
      readonly id: string;
      /** The 429's wait (ms) before free sends resume. */
      readonly retryAfterMs: number;
    }
  | { readonly type: "state"; readonly id: string; readonly state: BroadcastRunState }
  | {
      readonly type: "finished";
      readonly id: string;
      readonly status: BroadcastReport["status"];
      readonly counts: BroadcastCounts;
      readonly elapsedMs: number;
    };

/** The type names of {@link BroadcastEvent}. */
export type BroadcastEventType = BroadcastEvent["type"];

/**
 * The diagnostics_channel name of each event.
 *
 * @example
 * import diagnosticsChannel from "node:diagnostics_channel";
 * diagnosticsChannel.subscribe(broadcastChannels.settled, (event) => tally(event));
 */
export const broadcastChannels: Readonly<Record<BroadcastEventType, string>> = channelNames(
  "broadcast",
  ["started", "batch", "settled", "paid-refused", "state", "finished"],
);

/** Publishes an event; builds nothing when no one listens. */
export const publish = createPublisher<BroadcastEvent>(broadcastChannels);

/** How a broadcast ended in this process. */
export interface BroadcastReport {
  readonly id: string;
  /**
   * `completed`: every recipient has an outcome; `cancelled`; `failed`: it stopped (see `error`),
   * resumable with a later start; `interrupted`: this process stopped it (registry closed, the
   * start's signal, the outbox closed) and a later start resumes it.
   */
  readonly status: "completed" | "cancelled" | "failed" | "interrupted";
  /** Every recipient's outcome so far, over all processes (as the store had it at the end). */
  readonly counts: BroadcastCounts;
  /** The number of recipients, when known. */
  readonly total: number | undefined;
  readonly mode: BroadcastMode;
  /** Telegram time (the clock's ms) from this start to the end. */
  readonly elapsedMs: number;
  /** Why it failed, for `failed`. */
  readonly error?: unknown;
}

// Where a broadcast's next recipient comes from: the batch being read (claimed from the store,
// with what earlier holders recorded in it) and the position in it. Positions an earlier holder
// settled are skipped, one it left started is the send a crash cut off, and a value that is no
// chat id is settled `failed` on the spot.

import { type Clock, type Logger, safeLog } from "@telepace/core";
import type { ChatId } from "@telepace/outbox";
import { BatchRun } from "./batch-run.js";
import { broadcastDefaults } from "./options.js";
import { decodeRecord, type RecipientOutcome } from "./outcome.js";
import { END, isChatId, type RecipientReader } from "./recipients.js";
import type { BatchClaim, BroadcastRecord, BroadcastStore } from "./store.js";

/** A recipient on its way: its place, its chat, and what is known of its send. */
export interface SendItem {
  readonly batch: BatchRun;
  readonly position: number;
  chatId: ChatId;
  /** Its start is recorded in the store. */
  marked: boolean;
  migrated: boolean;
  /** In flight when a process died, and sent again. */
  readonly resent: boolean;
}

/** What the feed needs of the broadcast it feeds. */
export interface FeedHost {
  readonly id: string;
  readonly store: BroadcastStore;
  readonly workerId: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly leaseMs: number;
  readonly resendInFlight: boolean;
  readonly reader: RecipientReader;
  /** The batches this process holds; the feed adds the ones it claims. */
  readonly batches: Set<BatchRun>;
  /** Whether no recipient is to be handed out now (paused or stopped). */
  isHeld(): boolean;
  /** A store call, retried while the store fails (`undefined`: the run stopped meanwhile). */
  withStore<T>(call: () => Promise<T>): Promise<T | undefined>;
  /** The store's latest record of the broadcast. */
  recorded(record: BroadcastRecord): void;
  /** The store says paused (another process paused it) or cancelled. */
  pausedInStore(): void;
  cancelledInStore(): void;
  /** Settles a position at once (no send). */
  settle(item: SendItem, outcome: RecipientOutcome): void;
  /** Completes a batch when everything of it is read and durable. */
  maybeComplete(batch: BatchRun): void;
  publishBatch(claim: BatchClaim, action: "claimed"): void;
}

/** The next recipient of a broadcast, batch by batch. */
export class BatchFeed {
  readonly #host: FeedHost;
  #reading: BatchRun | undefined;
  #readAt = 0;
  #claimsDone = false;
  #claimAgainAt = Number.NEGATIVE_INFINITY;
  #sourceEnd: number | undefined;

  constructor(host: FeedHost) {
    this.#host = host;
  }

  /** When the store said to ask again for a batch. */
  get claimAgainAt(): number {
    return this.#claimAgainAt;
  }

  /** The store has no batch left to hand out: the broadcast is completed. */
  claimsDone(): void {
    this.#claimsDone = true;
  }

  /** Asks the store at once next time (after a resume). */
  claimNow(): void {
    this.#claimAgainAt = Number.NEGATIVE_INFINITY;
  }

  /** Stops reading a batch another process took over. */
  forget(batch: BatchRun): void {
    if (this.#reading === batch) this.#reading = undefined;
  }

  /** The next recipient to send, `undefined` when this process has none left, or "wait". */
  async next(): Promise<SendItem | undefined | "wait"> {
    const host = this.#host;
    for (;;) {
      if (host.isHeld()) return "wait";
      const batch = this.#reading ?? (await this.#claim());
      if (batch === undefined || batch === "wait") return batch;
      if (batch.lost) {
        this.#reading = undefined;
        continue;
      }
      const position = this.#readAt;
      const value =
        position >= batch.claim.to || (this.#sourceEnd !== undefined && position >= this.#sourceEnd)
          ? END
          : await host.reader.read(position);
      if (value === END) {
        if (position < batch.claim.to) {
          this.#sourceEnd = Math.min(this.#sourceEnd ?? position, position);
          batch.end = position;
        }
        batch.allRead = true;
        this.#reading = undefined;
        host.maybeComplete(batch);
        continue;
      }
      this.#readAt++;
      const recorded = decodeRecord(batch.claim.recorded.get(position));
      if (recorded !== undefined && recorded !== "started") {
        batch.count(recorded); // an earlier holder's outcome: already in the store
        continue;
      }
      batch.open++;
      const inFlightAtCrash = recorded === "started";
      const item: SendItem = {
        batch,
        position,
        chatId: isChatId(value) ? value : "",
        marked: inFlightAtCrash,
        migrated: false,
        resent: inFlightAtCrash && host.resendInFlight,
      };
      if (!isChatId(value)) {
        safeLog(
          host.logger,
          "warn",
          { broadcast: host.id, position, type: typeof value },
          "broadcast recipient is not a chat id",
        );
        host.settle(item, "failed");
      } else if (inFlightAtCrash && !host.resendInFlight) {
        host.settle(item, "maybe-delivered");
      } else {
        return item;
      }
    }
  }

  async #claim(): Promise<BatchRun | undefined | "wait"> {
    const host = this.#host;
    if (this.#claimsDone) return undefined;
    if (host.clock.now() < this.#claimAgainAt) return "wait";
    const result = await host.withStore(() =>
      host.store.claim(host.id, host.workerId, host.leaseMs),
    );
    if (result === undefined) return "wait";
    switch (result.status) {
      case "claimed": {
        const batch = new BatchRun(result.claim);
        host.batches.add(batch);
        this.#reading = batch;
        this.#readAt = result.claim.from;
        host.publishBatch(result.claim, "claimed");
        return batch;
      }
      case "wait":
        // Every open batch is leased: ask again when the first lease can run out, or sooner,
        // to see the broadcast complete once the other processes finish theirs.
        host.recorded(result.record);
        this.#claimAgainAt =
          host.clock.now() + Math.min(result.retryInMs, broadcastDefaults.claimPollMs);
        return "wait";
      case "stopped":
        host.recorded(result.record);
        if (result.record.state === "completed") {
          this.#claimsDone = true;
          return undefined;
        }
        if (result.record.state === "paused") host.pausedInStore();
        else host.cancelledInStore();
        return "wait";
    }
  }
}

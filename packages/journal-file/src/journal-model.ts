// What a journal's log means: unfinished updates (by where they are in the log, not their
// content), stored ids, application state and the highest id. Replaying the records rebuilds it;
// compaction writes it back out as a few records.

import type { Update } from "@grammyjs/types";
import type { JournalStateValue } from "@telepace/update-dispatch";
import type { StoredPlace } from "./place-reader.js";
import type { IdRanges, JournalRecord } from "./record-codec.js";
import { UpdateIdSet } from "./update-id-set.js";

/**
 * An unfinished update as the journal holds it: the update itself while its record waits to be
 * written, then only its place in the log.
 */
export type StoredEntry = Update | StoredPlace;

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The in-memory state of a journal; every change to it is one {@link JournalRecord}. */
export class JournalModel {
  /** Stored, unfinished updates by id, in arrival order (a Map keeps insertion order). */
  readonly unfinished = new Map<number, StoredEntry>();
  /** Application records, values deep-frozen. */
  readonly state = new Map<string, JournalStateValue>();
  /** Every stored id within the dedupe horizon, and a floor below it. */
  seen = new UpdateIdSet();
  highestUpdateId: number | undefined;

  /** @param dedupeHorizon - ids at or below `highestUpdateId - dedupeHorizon` count as stored. */
  constructor(private readonly dedupeHorizon: number) {}

  apply(record: JournalRecord): void {
    switch (record.type) {
      case "base":
        this.unfinished.clear();
        this.state.clear();
        this.seen = UpdateIdSet.from(record.seen);
        this.highestUpdateId = record.highestUpdateId;
        break;
      case "append":
        for (const update of record.updates) this.#stored(update.update_id, update);
        this.#raiseFloor();
        break;
      case "finish":
        for (const id of record.updateIds) this.unfinished.delete(id);
        break;
      case "put":
        this.state.set(record.key, deepFreeze(record.value));
        break;
      case "delete":
        this.state.delete(record.key);
        break;
      case "synced":
        break;
    }
  }

  /** A replayed append record: its updates' ids and where each one is in the log. */
  applyPlaced(ids: readonly number[], places: readonly StoredPlace[]): void {
    ids.forEach((id, index) => {
      this.#stored(id, places[index] as StoredPlace);
    });
    this.#raiseFloor();
  }

  /** The record of `update` was written at `place`: keep that instead, unless it finished. */
  place(update: Update, place: StoredPlace): void {
    if (this.unfinished.get(update.update_id) === update)
      this.unfinished.set(update.update_id, place);
  }

  /** What a rewritten log starts with: what the records dropped by compaction still imply. */
  baseRecord(): JournalRecord & { readonly seen: IdRanges } {
    return { type: "base", highestUpdateId: this.highestUpdateId, seen: this.seen.ranges() };
  }

  #stored(id: number, entry: StoredEntry): void {
    this.seen.add(id);
    this.unfinished.set(id, entry);
    if (this.highestUpdateId === undefined || id > this.highestUpdateId) this.highestUpdateId = id;
  }

  #raiseFloor(): void {
    if (this.highestUpdateId !== undefined) {
      this.seen.raiseFloor(this.highestUpdateId - this.dedupeHorizon);
    }
  }
}

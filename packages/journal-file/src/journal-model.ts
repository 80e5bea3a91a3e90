// What a journal's log means: unfinished updates, stored ids, application state and the highest
// id. Replaying the records rebuilds it; compaction writes it back out as a few records.

import type { Update } from "@grammyjs/types";
import type { JournalStateValue } from "@telepace/update-dispatch";
import type { JournalRecord } from "./record-codec.js";
import { UpdateIdSet } from "./update-id-set.js";

/** At most this many updates, and about this many bytes, go in one append record when compacting. */
const UPDATES_PER_RECORD = 100;
const BYTES_PER_RECORD = 1024 * 1024;

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
  readonly unfinished = new Map<number, Update>();
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
        for (const update of record.updates) {
          this.seen.add(update.update_id);
          this.unfinished.set(update.update_id, update);
          if (this.highestUpdateId === undefined || update.update_id > this.highestUpdateId) {
            this.highestUpdateId = update.update_id;
          }
        }
        if (this.highestUpdateId !== undefined) {
          this.seen.raiseFloor(this.highestUpdateId - this.dedupeHorizon);
        }
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

  /** The fewest records that rebuild this state: a base, the unfinished updates, the state. */
  liveRecords(): JournalRecord[] {
    const records: JournalRecord[] = [
      { type: "base", highestUpdateId: this.highestUpdateId, seen: this.seen.ranges() },
    ];
    let chunk: Update[] = [];
    let chunkBytes = 0;
    for (const update of this.unfinished.values()) {
      const bytes = JSON.stringify(update).length;
      if (
        chunk.length === UPDATES_PER_RECORD ||
        (chunk.length > 0 && chunkBytes + bytes > BYTES_PER_RECORD)
      ) {
        records.push({ type: "append", updates: chunk });
        chunk = [];
        chunkBytes = 0;
      }
      chunk.push(update);
      chunkBytes += bytes;
    }
    if (chunk.length > 0) records.push({ type: "append", updates: chunk });
    for (const [key, value] of this.state) records.push({ type: "put", key, value });
    return records;
  }
}

// The in-memory BroadcastStore: the journal store over a Map. Nothing survives the process; for
// tests, and for a broadcast that may start over after a crash.

import {
  type BroadcastJournal,
  type BroadcastJson,
  JournalBroadcastStore,
} from "./journal-store.js";

/** Records in a Map, copied in and out as an update journal would. */
class MapJournal implements BroadcastJournal {
  readonly #records = new Map<string, BroadcastJson>();

  async putState(key: string, value: BroadcastJson): Promise<void> {
    this.#records.set(key, structuredClone(value));
  }

  async deleteState(key: string): Promise<void> {
    this.#records.delete(key);
  }

  async state(): Promise<ReadonlyMap<string, unknown>> {
    return structuredClone(this.#records);
  }
}

/**
 * A {@link BroadcastStore} in memory: not crash-safe (a restarted process starts the broadcast
 * over). Use `JournalBroadcastStore` over a `FileUpdateJournal` on one machine, or
 * `RedisBroadcastStore` of `@telepace/redis` across processes.
 */
export class MemoryBroadcastStore extends JournalBroadcastStore {
  constructor() {
    super(new MapJournal());
  }
}

// A journal's records that outlive the "process" using them: each process gets a view of one Map;
// after `crash()` that view's writes never happen (and never resolve), as a killed process's.

import type { BroadcastJournal, BroadcastJson } from "../../src/index.js";

/** Durable records shared by every process of a test. */
export class DurableRecords {
  readonly records = new Map<string, BroadcastJson>();

  /** A new process's journal over these records. */
  open(): CrashableJournal {
    return new CrashableJournal(this.records);
  }
}

export class CrashableJournal implements BroadcastJournal {
  readonly #records: Map<string, BroadcastJson>;
  #dead = false;

  constructor(records: Map<string, BroadcastJson>) {
    this.#records = records;
  }

  crash(): void {
    this.#dead = true;
  }

  putState(key: string, value: BroadcastJson): Promise<void> {
    if (this.#dead) return new Promise(() => {});
    this.#records.set(key, structuredClone(value));
    return Promise.resolve();
  }

  deleteState(key: string): Promise<void> {
    if (this.#dead) return new Promise(() => {});
    this.#records.delete(key);
    return Promise.resolve();
  }

  async state(): Promise<ReadonlyMap<string, unknown>> {
    return structuredClone(this.#records);
  }
}

// MemoryUpdateJournal: the default UpdateJournal, kept in the process's memory. It makes the
// intake's "store first, confirm after" work within one process; a crash loses what it holds.

import type { Update } from "@grammyjs/types";
import { checkOptionalNumber, checkOptions } from "@telepace/core";
import { UpdateDispatchError } from "../errors.js";
import { validUpdateId } from "./update-id.js";
import type {
  AppendResult,
  JournalSnapshot,
  JournalStateValue,
  UpdateJournal,
} from "./update-journal.js";

/** Options of the {@link MemoryUpdateJournal} constructor. */
export interface MemoryUpdateJournalOptions {
  /**
   * How many finished update ids are remembered, so an update Telegram delivers again (a webhook
   * retry, a batch fetched again before its offset was confirmed) is a duplicate: a finished id
   * is kept in the slot `update_id` mod `dedupeWindow` until another id of that slot finishes, so
   * with Telegram's consecutive ids the last `dedupeWindow` ids are. Unfinished ids are always
   * remembered. Integer >= 0 and <= 1048576 (8 bytes a slot, allocated up front); 0 remembers no
   * finished id.
   * @defaultValue 10000
   */
  readonly dedupeWindow?: number | undefined;
}

/** The defaults of {@link MemoryUpdateJournalOptions}. */
export const memoryUpdateJournalDefaults = Object.freeze({ dedupeWindow: 10_000 });

const OPTION_NAMES = Object.freeze(Object.keys(memoryUpdateJournalDefaults));

/** The largest `dedupeWindow`: its slots are allocated up front. */
const MAX_DEDUPE_WINDOW = 1_048_576;

function checkUpdateId(update: unknown): void {
  if (validUpdateId(update) === undefined) {
    throw new TypeError("Expected an update with an `update_id` that is an integer >= 0");
  }
}

/**
 * An {@link UpdateJournal} in memory: the default of `UpdateIntake`.
 *
 * **Not crash-safe** (`snapshot().isDurable === false`): a crash or `kill -9` loses every update
 * it holds. Once the intake has confirmed those updates to Telegram (it does so right after
 * storing them), Telegram does not send them again, so for them delivery is at-most-once. It
 * lives as long as this object: a new process starts with an empty journal, so updates left
 * unfinished by a graceful shutdown are gone too. Use a durable journal when an update must
 * outlive the process.
 *
 * Bounds: unfinished updates are bounded by whoever appends (the intake's `maxJournalUpdates`,
 * 10,000 by default with this journal: its backlog is in memory, however few of its updates the
 * intake holds in its own hand-over); the finished ids kept for duplicate detection by
 * `dedupeWindow`; application state by what the application puts. `compact()` has nothing to
 * do: finished updates are dropped at `finish`.
 *
 * Application records are stored as JSON text, so what `state()` returns is a fresh copy with the
 * same JSON semantics a file journal has (`undefined` members dropped, `NaN` becomes `null`).
 *
 * @example
 * const journal = new MemoryUpdateJournal();
 * const intake = new UpdateIntake(processor, { getUpdates, journal });
 */
export class MemoryUpdateJournal implements UpdateJournal {
  readonly #dedupeWindow: number;
  // Insertion order is arrival order, which is what unfinished() must return.
  readonly #unfinished = new Map<number, Update>();
  // Finished ids by slot (`update_id` mod the window): an array write per finish and a read per
  // check; NaN marks a slot never written.
  readonly #finished: Float64Array;
  #highest: number | undefined;
  readonly #state = new Map<string, string>();
  #isClosed = false;

  /**
   * @param options - see {@link MemoryUpdateJournalOptions}.
   * @throws {TypeError | RangeError} for an unknown or invalid option.
   */
  constructor(options?: MemoryUpdateJournalOptions) {
    const given = checkOptions("options", options, OPTION_NAMES);
    this.#dedupeWindow = checkOptionalNumber(
      "dedupeWindow",
      given.dedupeWindow,
      memoryUpdateJournalDefaults.dedupeWindow,
      { integer: true, min: 0, max: MAX_DEDUPE_WINDOW },
    );
    this.#finished = new Float64Array(this.#dedupeWindow).fill(Number.NaN);
  }

  /**
   * Stores the updates whose ids it has not seen (unfinished, or finished within the window).
   * @returns rejects with a TypeError, storing nothing, when an update has no `update_id` that is an integer >= 0.
   */
  async append(updates: readonly Update[]): Promise<AppendResult> {
    this.#checkOpen();
    // Indexed loops: once per batch, often not yet optimised, where `for of` allocates per update.
    for (let index = 0; index < updates.length; index++) checkUpdateId(updates[index]); // a bad batch stores nothing
    const appended: Update[] = [];
    let duplicates = 0;
    for (let index = 0; index < updates.length; index++) {
      const update = updates[index] as Update;
      const id = update.update_id;
      if (this.#unfinished.has(id) || this.#isFinished(id)) {
        duplicates++;
        continue;
      }
      this.#unfinished.set(id, update);
      appended.push(update);
      if (this.#highest === undefined || id > this.#highest) this.#highest = id;
    }
    return Object.freeze({ appended: Object.freeze(appended), duplicates });
  }

  /** Marks one update or several finished; unknown and finished ids are a no-op. */
  async finish(updateIds: number | readonly number[]): Promise<void> {
    this.#checkOpen();
    if (typeof updateIds === "number") this.#finishOne(updateIds);
    else
      for (let index = 0; index < updateIds.length; index++)
        this.#finishOne(updateIds[index] as number);
  }

  #finishOne(updateId: number): void {
    if (this.#unfinished.delete(updateId) && this.#dedupeWindow > 0) {
      this.#finished[updateId % this.#dedupeWindow] = updateId;
    }
  }

  #isFinished(id: number): boolean {
    return this.#dedupeWindow > 0 && this.#finished[id % this.#dedupeWindow] === id;
  }

  async unfinished(): Promise<readonly Update[]> {
    this.#checkOpen();
    return Object.freeze([...this.#unfinished.values()]);
  }

  async unfinishedIds(): Promise<readonly number[]> {
    this.#checkOpen();
    return Object.freeze([...this.#unfinished.keys()]);
  }

  /** @returns rejects with a TypeError when `updateIds` is not an array. */
  async read(updateIds: readonly number[]): Promise<readonly Update[]> {
    this.#checkOpen();
    if (!Array.isArray(updateIds)) throw new TypeError("Expected `updateIds` to be an array");
    const found: Update[] = [];
    const asked = new Set<number>();
    for (const id of updateIds) {
      const update = this.#unfinished.get(id);
      if (update === undefined || asked.has(id)) continue;
      asked.add(id);
      found.push(update);
    }
    return Object.freeze(found);
  }

  async highestUpdateId(): Promise<number | undefined> {
    this.#checkOpen();
    return this.#highest;
  }

  /**
   * Forgets every stored id (the finished ones kept for duplicates) and the highest id.
   * @returns rejects with `ERR_JOURNAL_UNFINISHED` while an update is unfinished.
   */
  async restartIds(): Promise<void> {
    this.#checkOpen();
    if (this.#unfinished.size > 0) {
      throw new UpdateDispatchError(
        "ERR_JOURNAL_UNFINISHED",
        `Cannot restart update ids while ${this.#unfinished.size} stored updates are unfinished`,
      );
    }
    this.#finished.fill(Number.NaN);
    this.#highest = undefined;
  }

  /** Nothing to compact: finished updates are dropped when they finish. */
  async compact(): Promise<void> {
    this.#checkOpen();
  }

  /** @returns rejects with a TypeError when `value` is not JSON (a function, a BigInt, a cycle). */
  async putState(key: string, value: JournalStateValue): Promise<void> {
    this.#checkOpen();
    if (typeof key !== "string") throw new TypeError("Expected the state `key` to be a string");
    const text: unknown = JSON.stringify(value);
    if (typeof text !== "string") throw new TypeError("Expected the state `value` to be JSON");
    this.#state.set(key, text);
  }

  async deleteState(key: string): Promise<void> {
    this.#checkOpen();
    this.#state.delete(key);
  }

  async state(): Promise<ReadonlyMap<string, JournalStateValue>> {
    this.#checkOpen();
    const copy = new Map<string, JournalStateValue>();
    for (const [key, text] of this.#state) copy.set(key, JSON.parse(text) as JournalStateValue);
    return copy;
  }

  snapshot(): JournalSnapshot {
    return Object.freeze({
      kind: "memory",
      isDurable: false,
      unfinished: this.#unfinished.size,
      highestUpdateId: this.#highest,
    });
  }

  /** Marks the journal closed; what it held is gone with the object. Idempotent. */
  async close(): Promise<void> {
    this.#isClosed = true;
  }

  #checkOpen(): void {
    if (this.#isClosed) {
      throw new UpdateDispatchError("ERR_JOURNAL_CLOSED", "The update journal is closed");
    }
  }
}

// A BroadcastStore over the small-records API of an update journal (`putState`, `deleteState`,
// `state`): @telepace/journal-file's FileUpdateJournal keeps a broadcast's progress in its
// directory, synced before each write resolves, with group commit; a process owns the directory,
// so leases are this process's own. The in-memory store is the same over a Map.

import { randomUUID } from "node:crypto";
import { describeValue } from "@telepace/core";
import { BroadcastError } from "./errors.js";
import {
  addCounts,
  type BroadcastCounts,
  countSettled,
  decodeRecord,
  type MutableCounts,
  type PositionRecord,
  zeroCounts,
} from "./outcome.js";
import type {
  BatchClaim,
  BroadcastDefinition,
  BroadcastRecord,
  BroadcastState,
  BroadcastStore,
  ClaimResult,
} from "./store.js";

/** A JSON value, as an update journal stores it. */
export type BroadcastJson =
  | string
  | number
  | boolean
  | null
  | readonly BroadcastJson[]
  | { readonly [key: string]: BroadcastJson };

/**
 * The part of an update journal a {@link JournalBroadcastStore} uses: small JSON records by key.
 * `FileUpdateJournal` of `@telepace/journal-file` (durable) and `MemoryUpdateJournal` of
 * `@telepace/update-dispatch` (not) have it.
 */
export interface BroadcastJournal {
  putState(key: string, value: BroadcastJson): Promise<void>;
  deleteState(key: string): Promise<void>;
  state(): Promise<ReadonlyMap<string, unknown>>;
}

const PREFIX = "broadcast:";

/** The header record of a broadcast, as stored. */
interface Header {
  v: 1;
  fingerprint: string;
  batchSize: number;
  state: BroadcastState;
  end: number | null;
  next: number;
  /** Claimed, unfinished batches. */
  open: number[];
  counts: MutableCounts;
}

interface Entry {
  readonly header: Header;
  /** Records of the positions of open batches. */
  readonly positions: Map<number, PositionRecord>;
}

function corrupt(id: string, what: string): BroadcastError {
  return new BroadcastError(
    "ERR_BROADCAST_CORRUPT",
    `The stored broadcast "${id}" is unreadable: ${what}`,
  );
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function readHeader(id: string, value: unknown): Header {
  const header = value as Partial<Header> | null;
  if (typeof header !== "object" || header === null || header.v !== 1) {
    throw corrupt(id, `its record is ${describeValue(value)}`);
  }
  const counts = zeroCounts();
  for (const key of Object.keys(counts) as (keyof BroadcastCounts)[]) {
    const count = (header.counts as Record<string, unknown> | undefined)?.[key];
    if (!isCount(count)) throw corrupt(id, `its count ${key} is ${describeValue(count)}`);
    counts[key] = count;
  }
  const states: readonly BroadcastState[] = ["running", "paused", "cancelled", "completed"];
  if (
    typeof header.fingerprint !== "string" ||
    !isCount(header.batchSize) ||
    header.batchSize < 1 ||
    !states.includes(header.state as BroadcastState) ||
    !(header.end === null || isCount(header.end)) ||
    !isCount(header.next) ||
    !Array.isArray(header.open) ||
    !header.open.every(isCount)
  ) {
    throw corrupt(id, "a field is missing or malformed");
  }
  return { ...(header as Header), open: [...header.open], counts };
}

/**
 * A {@link BroadcastStore} in an update journal's records: `broadcast:<id>` for the broadcast,
 * `broadcast:<id>:<position>` for each position of an open batch (written before the position's
 * request, rewritten with its outcome, deleted when its batch finishes). At most the open
 * batches' positions are kept, in the journal and in memory, whatever the number of recipients.
 *
 * @example
 * const journal = await FileUpdateJournal.open("./data"); // the bot's journal
 * const store = new JournalBroadcastStore(journal);
 */
export class JournalBroadcastStore implements BroadcastStore {
  /** One process owns a journal: its leases are this store's own. */
  readonly isShared = false;
  readonly #journal: BroadcastJournal;
  #loaded: Promise<Map<string, Entry>> | undefined;
  /** The batches this store handed out and that are not finished or released: key → token. */
  readonly #held = new Map<string, string>();

  /** @throws {TypeError} when `journal` lacks `putState`, `deleteState` or `state`. */
  constructor(journal: BroadcastJournal) {
    for (const method of ["putState", "deleteState", "state"] as const) {
      if (typeof (journal as Partial<BroadcastJournal> | null)?.[method] !== "function") {
        throw new TypeError(
          `Expected \`journal\` to have a \`${method}\` method (an update journal), got ${describeValue(journal)}`,
        );
      }
    }
    this.#journal = journal;
  }

  async open(id: string, definition: BroadcastDefinition): Promise<BroadcastRecord> {
    const entries = await this.#entries();
    const existing = entries.get(id);
    if (existing !== undefined) {
      if (existing.header.fingerprint !== definition.fingerprint) {
        throw new BroadcastError(
          "ERR_BROADCAST_CONFLICT",
          `Broadcast "${id}" exists with another message: start it with the same message, or use a new id`,
        );
      }
      return this.#record(id, existing);
    }
    const entry: Entry = {
      header: {
        v: 1,
        fingerprint: definition.fingerprint,
        batchSize: definition.batchSize,
        state: "running",
        end: definition.end ?? null,
        next: 0,
        open: [],
        counts: zeroCounts(),
      },
      positions: new Map(),
    };
    entries.set(id, entry);
    await this.#putHeader(id, entry);
    return this.#record(id, entry);
  }

  async read(id: string): Promise<BroadcastRecord | undefined> {
    const entry = (await this.#entries()).get(id);
    return entry === undefined ? undefined : this.#record(id, entry);
  }

  async claim(id: string, _worker: string, leaseMs: number): Promise<ClaimResult> {
    const entry = await this.#entry(id);
    const { header } = entry;
    if (header.state !== "running") return { status: "stopped", record: this.#record(id, entry) };
    // A batch left open by a process that died (or released at a pause), lowest first.
    const free = header.open.filter((batch) => !this.#held.has(`${id}:${batch}`));
    if (free.length > 0)
      return { status: "claimed", claim: this.#hold(id, entry, Math.min(...free)) };
    if (header.end !== null && header.next * header.batchSize >= header.end) {
      if (header.open.length > 0) {
        return { status: "wait", retryInMs: leaseMs, record: this.#record(id, entry) };
      }
      header.state = "completed";
      await this.#putHeader(id, entry);
      return { status: "stopped", record: this.#record(id, entry) };
    }
    const batch = header.next++;
    header.open.push(batch);
    const claim = this.#hold(id, entry, batch);
    await this.#putHeader(id, entry);
    return { status: "claimed", claim };
  }

  async renew(claim: BatchClaim): Promise<boolean> {
    return this.#held.get(`${claim.id}:${claim.batch}`) === claim.token;
  }

  async markStarted(claim: BatchClaim, position: number): Promise<void> {
    await this.#write(claim, position, "s");
  }

  async markUnsent(claim: BatchClaim, position: number): Promise<void> {
    const entry = await this.#owned(claim);
    entry.positions.delete(position);
    await this.#journal.deleteState(`${PREFIX}${claim.id}:${position}`);
  }

  async markSettled(claim: BatchClaim, position: number, record: PositionRecord): Promise<void> {
    await this.#write(claim, position, record);
  }

  async complete(claim: BatchClaim, end: number | undefined): Promise<BroadcastRecord> {
    const entry = await this.#owned(claim);
    const { header, positions } = entry;
    const counts = zeroCounts();
    const finished: number[] = [];
    for (const [position, record] of positions) {
      if (position < claim.from || position >= claim.to) continue;
      const decoded = decodeRecord(record);
      if (decoded !== undefined && decoded !== "started") countSettled(counts, decoded);
      finished.push(position);
    }
    for (const position of finished) positions.delete(position);
    addCounts(header.counts, counts);
    header.open = header.open.filter((batch) => batch !== claim.batch);
    if (end !== undefined) header.end = Math.min(header.end ?? end, end);
    this.#held.delete(`${claim.id}:${claim.batch}`);
    if (
      header.state === "running" &&
      header.end !== null &&
      header.open.length === 0 &&
      header.next * header.batchSize >= header.end
    ) {
      header.state = "completed";
    }
    // The counts first: once they hold the batch, its position records are no longer needed.
    await this.#putHeader(claim.id, entry);
    await Promise.all(
      finished.map((position) => this.#journal.deleteState(`${PREFIX}${claim.id}:${position}`)),
    );
    return this.#record(claim.id, entry);
  }

  async release(claim: BatchClaim): Promise<void> {
    const key = `${claim.id}:${claim.batch}`;
    if (this.#held.get(key) === claim.token) this.#held.delete(key);
  }

  async setState(id: string, state: "running" | "paused" | "cancelled"): Promise<BroadcastRecord> {
    const entry = await this.#entry(id);
    const { header } = entry;
    // Completed and cancelled are final.
    if (header.state !== "completed" && header.state !== "cancelled" && header.state !== state) {
      header.state = state;
      await this.#putHeader(id, entry);
    }
    return this.#record(id, entry);
  }

  #hold(id: string, entry: Entry, batch: number): BatchClaim {
    const token = randomUUID();
    this.#held.set(`${id}:${batch}`, token);
    const from = batch * entry.header.batchSize;
    const to = from + entry.header.batchSize;
    const recorded = new Map<number, PositionRecord>();
    for (const [position, record] of entry.positions) {
      if (position >= from && position < to) recorded.set(position, record);
    }
    return { id, batch, from, to, token, recorded };
  }

  async #write(claim: BatchClaim, position: number, record: PositionRecord): Promise<void> {
    const entry = await this.#owned(claim);
    entry.positions.set(position, record);
    await this.#journal.putState(`${PREFIX}${claim.id}:${position}`, record);
  }

  async #owned(claim: BatchClaim): Promise<Entry> {
    const entry = await this.#entry(claim.id);
    if (this.#held.get(`${claim.id}:${claim.batch}`) !== claim.token) {
      throw new BroadcastError(
        "ERR_BROADCAST_LEASE_LOST",
        `Batch ${claim.batch} of broadcast "${claim.id}" is no longer held by this claim`,
      );
    }
    return entry;
  }

  async #entry(id: string): Promise<Entry> {
    const entry = (await this.#entries()).get(id);
    if (entry === undefined) throw new RangeError(`No broadcast "${id}" in this store`);
    return entry;
  }

  #putHeader(id: string, entry: Entry): Promise<void> {
    // A copy as it is now: a later change must not alter what this write stores.
    const header = entry.header;
    return this.#journal.putState(`${PREFIX}${id}`, {
      ...header,
      open: [...header.open],
      counts: { ...header.counts },
    });
  }

  #record(id: string, entry: Entry): BroadcastRecord {
    const { header } = entry;
    return Object.freeze({
      id,
      fingerprint: header.fingerprint,
      batchSize: header.batchSize,
      state: header.state,
      end: header.end ?? undefined,
      nextBatch: header.next,
      counts: Object.freeze({ ...header.counts }),
      openBatches: header.open.length,
    });
  }

  /** Every broadcast in the journal, read once; position records of finished batches dropped. */
  #entries(): Promise<Map<string, Entry>> {
    this.#loaded ??= this.#load();
    return this.#loaded;
  }

  async #load(): Promise<Map<string, Entry>> {
    const entries = new Map<string, Entry>();
    const positions: [string, number, unknown][] = [];
    for (const [key, value] of await this.#journal.state()) {
      if (!key.startsWith(PREFIX)) continue;
      const rest = key.slice(PREFIX.length);
      const colon = rest.lastIndexOf(":");
      if (colon === -1) {
        entries.set(rest, { header: readHeader(rest, value), positions: new Map() });
      } else {
        positions.push([rest.slice(0, colon), Number(rest.slice(colon + 1)), value]);
      }
    }
    const stale: string[] = [];
    for (const [id, position, value] of positions) {
      const entry = entries.get(id);
      const batch = entry === undefined ? -1 : Math.floor(position / entry.header.batchSize);
      if (
        entry === undefined ||
        !Number.isSafeInteger(position) ||
        !entry.header.open.includes(batch) ||
        decodeRecord(value) === undefined
      ) {
        // Left by a crash after its batch finished (or unreadable): nothing needs it.
        stale.push(`${PREFIX}${id}:${position}`);
        continue;
      }
      entry.positions.set(position, value as PositionRecord);
    }
    await Promise.all(stale.map((key) => this.#journal.deleteState(key)));
    return entries;
  }
}

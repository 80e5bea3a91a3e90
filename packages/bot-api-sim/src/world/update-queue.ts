// One bot's pending updates with getUpdates' offset semantics: an update is forgotten once a
// call asks for a higher offset, a negative offset keeps only the last |offset| updates, and an
// offset from the future falls back to the oldest pending update. Webhook delivery confirms
// updates one by one instead, in any order. The ids can restart at another number, as Telegram's
// do after a week without updates.

import type { Update } from "@grammyjs/types";
import { BotApiSimError } from "../errors.js";

/** Update kinds Telegram sends when `allowed_updates` is empty or was never given. */
const DEFAULT_EXCLUDED = new Set(["chat_member", "message_reaction", "message_reaction_count"]);

/** Telegram caps one getUpdates answer at about 4 MiB of update JSON. */
const MAX_RESPONSE_CHARS = 1 << 22;
const PER_UPDATE_OVERHEAD = 50;

/** One pending update, as the webhook delivery holds it until a 2xx confirms it. */
export interface QueuedUpdate {
  readonly update: Update;
  readonly json: string;
  readonly createdAtMs: number;
  /** Position in push order (gap-free per queue), whatever the update ids are. */
  readonly seq: number;
  confirmed: boolean;
}

/** An update type name such as "message" or "callback_query". */
export type UpdateType = Exclude<keyof Update, "update_id">;

/** Pending updates of one bot, bounded, with sticky `allowed_updates`. */
export class UpdateQueue {
  #items: QueuedUpdate[] = [];
  #head = 0;
  // Confirmed (by a webhook) but not yet behind the head; they no longer count as pending.
  #confirmedAhead = 0;
  #nextSeq = 0;
  #nextId: number;
  #allowed: ReadonlySet<string> | undefined;
  readonly #maxPending: number;
  readonly #retentionMs: number;

  constructor(firstId: number, maxPending: number, retentionMs: number) {
    this.#nextId = firstId;
    this.#maxPending = maxPending;
    this.#retentionMs = retentionMs;
  }

  /** Unconfirmed updates kept now. */
  get size(): number {
    return this.#items.length - this.#head - this.#confirmedAhead;
  }

  /** The allowed update types, or `undefined` for Telegram's default set. */
  get allowedUpdates(): readonly string[] | undefined {
    return this.#allowed === undefined ? undefined : [...this.#allowed];
  }

  /**
   * Makes `allowed_updates` sticky as Telegram does: an empty list restores the default, a
   * missing one keeps the previous choice. The filter applies to updates created afterwards.
   */
  setAllowedUpdates(types: readonly string[] | undefined): void {
    if (types === undefined) return;
    this.#allowed = types.length === 0 ? undefined : new Set(types);
  }

  /** Whether an update of this type would be queued under the current filter. */
  accepts(type: UpdateType): boolean {
    return this.#allowed === undefined ? !DEFAULT_EXCLUDED.has(type) : this.#allowed.has(type);
  }

  /** Unconfirmed updates after forgetting expired ones. */
  pending(nowMs: number): number {
    this.#expire(nowMs);
    return this.size;
  }

  /** Whether `count` more updates fit under `maxPendingUpdates`. */
  hasRoom(nowMs: number, count = 1): boolean {
    this.#expire(nowMs);
    return this.size + count <= this.#maxPending;
  }

  /**
   * Queues an update and returns it, or returns `undefined` when the filter excludes its type.
   * Throws `ERR_UPDATE_QUEUE_FULL` at the bound; nothing is dropped silently.
   */
  push<K extends UpdateType>(
    type: K,
    payload: NonNullable<Update[K]>,
    nowMs: number,
  ): Update | undefined {
    if (!this.accepts(type)) return undefined;
    if (!this.hasRoom(nowMs)) {
      throw new BotApiSimError(
        "ERR_UPDATE_QUEUE_FULL",
        `The bot has ${this.size} unconfirmed updates (maxPendingUpdates); it must call getUpdates before more can be queued`,
      );
    }
    const update = { update_id: this.#nextId++, [type]: payload } as Update;
    const json = JSON.stringify(update);
    this.#items.push({ update, json, createdAtMs: nowMs, seq: this.#nextSeq++, confirmed: false });
    return update;
  }

  /**
   * getUpdates without the waiting: confirms what `offset` confirms and returns up to `limit`
   * updates from there, within Telegram's response size cap.
   */
  take(offset: number, limit: number, nowMs: number): Update[] {
    this.#expire(nowMs);
    const head = this.#headId();
    let from = offset;
    if (from <= 0) {
      if (from < 0) from += this.#nextId;
      if (from < head) from = head;
      this.#forgetBelow(from);
    } else if (from <= this.#nextId) {
      this.#forgetBelow(from);
    } else {
      from = head;
    }
    const result: Update[] = [];
    let budget = MAX_RESPONSE_CHARS;
    for (let i = this.#head; i < this.#items.length && result.length < limit; i++) {
      const item = this.#items[i] as QueuedUpdate;
      if (item.confirmed || item.update.update_id < from) continue;
      budget -= PER_UPDATE_OVERHEAD + item.json.length;
      if (budget <= 0) break;
      result.push(item.update);
    }
    return result;
  }

  /**
   * The next update gets `nextId`, the ones after it follow on: a new numbering, as Telegram picks
   * at random after a week without updates (often below the last id), so an offset confirmed
   * before lies in the future. Throws `ERR_INVALID_STATE` while updates are pending: after such a
   * week none are (Telegram keeps them 24 hours).
   */
  restartIds(nextId: number, nowMs: number): void {
    const pending = this.pending(nowMs);
    if (pending > 0) {
      throw new BotApiSimError(
        "ERR_INVALID_STATE",
        `The bot has ${pending} unconfirmed updates; update ids restart only after a week without updates, when none are pending`,
      );
    }
    this.#nextId = nextId;
  }

  /** Drops every pending update (setWebhook/deleteWebhook with drop_pending_updates). */
  clear(): void {
    this.#items = [];
    this.#head = 0;
    this.#confirmedAhead = 0;
  }

  /** Pending updates pushed at or after sequence number `seq`, in push order. */
  pendingFrom(seq: number, nowMs: number): QueuedUpdate[] {
    this.#expire(nowMs);
    const first = this.#items[0];
    if (first === undefined) return [];
    const start = Math.max(this.#head, seq - first.seq);
    return this.#items.slice(start).filter((item) => !item.confirmed);
  }

  /** Whether `item` is still waiting: not confirmed, cleared, expired or confirmed by an offset. */
  isPending(item: QueuedUpdate, nowMs: number): boolean {
    this.#expire(nowMs);
    return !item.confirmed && this.#indexOf(item) >= this.#head;
  }

  /** When `item` is forgotten unless confirmed first, in ms of the queue's clock. */
  expiresAtMs(item: QueuedUpdate): number {
    return item.createdAtMs + this.#retentionMs;
  }

  /** Forgets one update that a webhook confirmed (or that delivery gave up on). */
  confirm(item: QueuedUpdate): void {
    if (item.confirmed || this.#indexOf(item) < this.#head) return;
    item.confirmed = true;
    this.#confirmedAhead++;
    while (this.#head < this.#items.length && (this.#items[this.#head] as QueuedUpdate).confirmed) {
      this.#advance();
    }
    this.#compact();
  }

  /** The index of `item` in #items, or -1 once it is gone (cleared or compacted away). */
  #indexOf(item: QueuedUpdate): number {
    const first = this.#items[0];
    const index = first === undefined ? -1 : item.seq - first.seq;
    return index >= 0 && this.#items[index] === item ? index : -1;
  }

  /** Moves the head past one item. */
  #advance(): void {
    if ((this.#items[this.#head] as QueuedUpdate).confirmed) this.#confirmedAhead--;
    this.#head++;
  }

  #headId(): number {
    const first = this.#items[this.#head];
    return first === undefined ? this.#nextId : first.update.update_id;
  }

  #forgetBelow(id: number): void {
    while (
      this.#head < this.#items.length &&
      (this.#items[this.#head] as QueuedUpdate).update.update_id < id
    ) {
      this.#advance();
    }
    this.#compact();
  }

  #expire(nowMs: number): void {
    while (
      this.#head < this.#items.length &&
      nowMs - (this.#items[this.#head] as QueuedUpdate).createdAtMs > this.#retentionMs
    ) {
      this.#advance();
    }
    this.#compact();
  }

  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }
}

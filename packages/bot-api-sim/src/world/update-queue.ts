// One bot's pending updates with getUpdates' offset semantics: an update is forgotten once a
// call asks for a higher offset, a negative offset keeps only the last |offset| updates, and an
// offset from the future falls back to the oldest pending update. The ids can restart at another
// number, as Telegram's do after a week without updates.

import type { Update } from "@grammyjs/types";
import { BotApiSimError } from "../errors.js";

/** Update kinds Telegram sends when `allowed_updates` is empty or was never given. */
const DEFAULT_EXCLUDED = new Set(["chat_member", "message_reaction", "message_reaction_count"]);

/** Telegram caps one getUpdates answer at about 4 MiB of update JSON. */
const MAX_RESPONSE_CHARS = 1 << 22;
const PER_UPDATE_OVERHEAD = 50;

interface QueuedUpdate {
  readonly update: Update;
  readonly json: string;
  readonly createdAtMs: number;
}

/** An update type name such as "message" or "callback_query". */
export type UpdateType = Exclude<keyof Update, "update_id">;

/** Pending updates of one bot, bounded, with sticky `allowed_updates`. */
export class UpdateQueue {
  #items: QueuedUpdate[] = [];
  #head = 0;
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
    return this.#items.length - this.#head;
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
    this.#items.push({ update, json: JSON.stringify(update), createdAtMs: nowMs });
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
      if (item.update.update_id < from) continue;
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
      this.#head++;
    }
    this.#compact();
  }

  #expire(nowMs: number): void {
    while (
      this.#head < this.#items.length &&
      nowMs - (this.#items[this.#head] as QueuedUpdate).createdAtMs > this.#retentionMs
    ) {
      this.#head++;
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

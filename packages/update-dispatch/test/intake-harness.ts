// A fake getUpdates that behaves like Telegram's (offset confirmation, limit, long polling on a
// ManualClock, scripted failures), plus helpers to wait on promise-driven progress.

import type { Update } from "@grammyjs/types";
import { abortReason, type ManualClock, onAbort } from "@telepace/core";
import type { GetUpdates, GetUpdatesParams } from "../src/index.js";
import { settle } from "./harness.js";

export class FakeTelegram {
  readonly #clock: ManualClock;
  /** Updates Telegram holds (not confirmed), in update_id order. */
  #queue: Update[] = [];
  /** The highest id of the current numbering, `undefined` before its first update. */
  #highestAssigned: number | undefined;
  readonly #wakers = new Set<() => void>();
  /** Every call's parameters, in order. */
  readonly calls: GetUpdatesParams[] = [];
  /** How often each update_id was returned. */
  readonly deliveries = new Map<number, number>();
  /** Thrown by the next calls, one per call, before anything else. */
  readonly failures: unknown[] = [];
  /**
   * How an offset past every id of the current numbering is answered: Telegram falls back to the
   * head of its queue (`"head"`); `"empty"` plays a server that answers nothing instead.
   */
  futureOffset: "head" | "empty" = "head";

  constructor(clock: ManualClock) {
    this.#clock = clock;
  }

  /** Updates Telegram has not been told to forget. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Total updates returned over all calls. */
  get returned(): number {
    let total = 0;
    for (const count of this.deliveries.values()) total += count;
    return total;
  }

  push(...updates: Update[]): void {
    this.#queue.push(...updates);
    this.#queue.sort((a, b) => a.update_id - b.update_id);
    for (const update of updates) {
      if (this.#highestAssigned === undefined || update.update_id > this.#highestAssigned) {
        this.#highestAssigned = update.update_id;
      }
    }
    for (const wake of [...this.#wakers]) wake();
  }

  /**
   * The next updates start a new numbering, as after a week without updates (their ids may be
   * lower than every id before). Like Telegram then, nothing may be pending.
   */
  restartIds(): void {
    if (this.#queue.length > 0) throw new Error(`${this.#queue.length} updates are pending`);
    this.#highestAssigned = undefined;
  }

  readonly getUpdates: GetUpdates = async (params, { signal }) => {
    this.calls.push(params);
    if (this.failures.length > 0) throw this.failures.shift();
    if (signal.aborted) throw abortReason(signal);
    let batch = this.#take(params);
    if (batch.length === 0 && params.timeout > 0) {
      const endsAt = this.#clock.now() + params.timeout * 1000;
      while (batch.length === 0 && this.#clock.now() < endsAt) {
        await this.#wait(endsAt - this.#clock.now(), signal);
        batch = this.#take(params);
      }
    }
    for (const update of batch) {
      this.deliveries.set(update.update_id, (this.deliveries.get(update.update_id) ?? 0) + 1);
    }
    return batch;
  };

  /** Confirms what `offset` confirms and returns up to `limit` updates from there. */
  #take({ offset, limit }: GetUpdatesParams): Update[] {
    if (offset !== undefined) {
      const isFuture = this.#highestAssigned !== undefined && offset > this.#highestAssigned + 1;
      if (!isFuture) this.#queue = this.#queue.filter((update) => update.update_id >= offset);
      else if (this.futureOffset === "empty") return [];
    }
    return this.#queue.slice(0, limit);
  }

  /** Until an update is pushed or `ms` pass on the clock; rejects when `signal` aborts. */
  #wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        this.#wakers.delete(done);
        timer.cancel();
        unsubscribe();
        resolve();
      };
      const timer = this.#clock.setTimer(done, ms);
      const unsubscribe = onAbort(signal, () => {
        this.#wakers.delete(done);
        timer.cancel();
        reject(abortReason(signal));
      });
      this.#wakers.add(done);
    });
  }
}

/** Flushes promise continuations until `condition` holds (or gives up after `turns`). */
export async function until(condition: () => boolean, turns = 2_000): Promise<void> {
  for (let turn = 0; turn < turns; turn++) {
    if (condition()) return;
    await settle();
  }
  throw new Error("condition did not hold");
}

/** An error shaped like grammY's GrammyError / a Bot API envelope. */
export function apiError(errorCode: number, retryAfterS?: number): Error {
  return Object.assign(new Error(`Call to 'getUpdates' failed! (${errorCode})`), {
    error_code: errorCode,
    description: "error",
    parameters: retryAfterS === undefined ? {} : { retry_after: retryAfterS },
  });
}

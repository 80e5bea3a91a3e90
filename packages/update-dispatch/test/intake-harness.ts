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
  readonly #wakers = new Set<() => void>();
  /** Every call's parameters, in order. */
  readonly calls: GetUpdatesParams[] = [];
  /** How often each update_id was returned. */
  readonly deliveries = new Map<number, number>();
  /** Thrown by the next calls, one per call, before anything else. */
  readonly failures: unknown[] = [];

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
    for (const wake of [...this.#wakers]) wake();
  }

  readonly getUpdates: GetUpdates = async (params, { signal }) => {
    this.calls.push(params);
    if (this.failures.length > 0) throw this.failures.shift();
    if (signal.aborted) throw abortReason(signal);
    const { offset } = params;
    if (offset !== undefined) this.#queue = this.#queue.filter((u) => u.update_id >= offset);
    let batch = this.#queue.slice(0, params.limit);
    if (batch.length === 0 && params.timeout > 0) {
      await new Promise<void>((resolve, reject) => {
        const done = (): void => {
          this.#wakers.delete(done);
          timer.cancel();
          unsubscribe();
          resolve();
        };
        const timer = this.#clock.setTimer(done, params.timeout * 1000);
        const unsubscribe = onAbort(signal, () => {
          this.#wakers.delete(done);
          timer.cancel();
          reject(abortReason(signal));
        });
        this.#wakers.add(done);
      });
      batch = this.#queue.slice(0, params.limit);
    }
    for (const update of batch) {
      this.deliveries.set(update.update_id, (this.deliveries.get(update.update_id) ?? 0) + 1);
    }
    return batch;
  };
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

// Replaying an update stream: a feed that hands out updates as they arrive, like getUpdates, and
// a processor that simulates I/O and checks per-principal order and exclusivity as it runs.

import type { Update } from "@grammyjs/types";
import type { UpdateStream } from "./workload.js";

/** Hands out a stream's updates as they arrive, like getUpdates with long polling. */
export class UpdateFeed {
  readonly #stream: UpdateStream;
  readonly #startedAt: number;
  #next = 0;

  constructor(stream: UpdateStream, startedAt: number) {
    this.#stream = stream;
    this.#startedAt = startedAt;
  }

  /** Whether every update has been handed out. */
  get isExhausted(): boolean {
    return this.#next >= this.#stream.updates.length;
  }

  /**
   * Up to `limit` arrived updates; waits for the next arrival when none is there. Resolves empty
   * when aborted or exhausted (a long poll that ends without updates).
   */
  async supply(limit: number, signal?: AbortSignal): Promise<Update[]> {
    const { updates, arrivalMs } = this.#stream;
    for (;;) {
      if (this.isExhausted || signal?.aborted) {
        if (this.isExhausted && signal !== undefined && !signal.aborted) {
          await new Promise<void>((resolve) =>
            signal.addEventListener("abort", () => resolve(), { once: true }),
          );
        }
        return [];
      }
      const elapsed = performance.now() - this.#startedAt;
      const waitMs = (arrivalMs[this.#next] as number) - elapsed;
      if (waitMs <= 0) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        signal?.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    }
    const elapsed = performance.now() - this.#startedAt;
    const batch: Update[] = [];
    const end = Math.min(updates.length, this.#next + Math.max(1, Math.floor(limit)));
    while (this.#next < end && (arrivalMs[this.#next] as number) <= elapsed) {
      batch.push(updates[this.#next] as Update);
      this.#next++;
    }
    return batch;
  }
}

/** What a replay measured. */
export interface ReplayTrace {
  /** Processor start minus arrival, ms, per update (NaN for updates never started). */
  readonly queueingMs: Float64Array;
  /** Updates whose processor finished. */
  readonly finished: number;
  /** First starts of an update after a later update of its principal had started. */
  readonly outOfOrderStarts: number;
  /** Starts of an update while another update of the same principal was still running. */
  readonly overlappingStarts: number;
  /** Starts of an update that had started before. */
  readonly duplicateStarts: number;
  /** Last processor end minus the start of the replay, ms. */
  readonly makespanMs: number;
  /**
   * How long each update held its processor slot, ms: from the processor's call until its
   * simulated I/O ended (the timer's lateness included); NaN for updates never finished.
   */
  readonly heldMs: Float64Array;
}

/** Options of {@link ReplayRecorder}. */
export interface RecorderOptions {
  /**
   * Position of an update in the stream. @defaultValue `update_id − 1` (the in-memory feed's ids;
   * the sim numbers its updates itself, so its replays read the position from the text)
   */
  readonly indexOf?: (update: Update) => number;
  /** Whether `process` is an `async` function even when there is no I/O. @defaultValue false */
  readonly isAsync?: boolean;
  /** Which positions `done` waits for. @defaultValue every update of the stream */
  readonly awaits?: (index: number) => boolean;
}

/**
 * The processor every contender calls, with the checks. `process(update)` waits the update's
 * simulated I/O on a real timer (none when it is 0) and records timings; with no I/O it returns
 * synchronously (`undefined`), or a resolved promise when the recorder is `isAsync`.
 */
export class ReplayRecorder {
  readonly #stream: UpdateStream;
  readonly #startedAt: number;
  readonly #queueingMs: Float64Array;
  readonly #heldMs: Float64Array;
  readonly #highestStarted: Int32Array;
  readonly #running: Uint8Array;
  #finished = 0;
  #outOfOrder = 0;
  #overlapping = 0;
  #duplicates = 0;
  #lastEnd = 0;
  readonly #isAwaited: Uint8Array;
  #awaitedLeft: number;
  readonly #done: Promise<void>;
  #resolveDone: () => void = () => {};
  readonly #indexOf: (update: Update) => number;
  /** The processor. */
  readonly process: (update: Update) => Promise<void> | undefined;

  constructor(stream: UpdateStream, startedAt: number, options: RecorderOptions = {}) {
    this.#stream = stream;
    this.#startedAt = startedAt;
    this.#indexOf = options.indexOf ?? ((update) => update.update_id - 1);
    const run = (update: Update): Promise<void> | undefined => this.#run(update);
    this.process = options.isAsync === true ? async (update) => run(update) : run;
    this.#queueingMs = new Float64Array(stream.updates.length).fill(Number.NaN);
    this.#heldMs = new Float64Array(stream.updates.length).fill(Number.NaN);
    this.#highestStarted = new Int32Array(stream.options.principals).fill(-1);
    this.#running = new Uint8Array(stream.options.principals);
    this.#isAwaited = new Uint8Array(stream.updates.length);
    for (let index = 0; index < stream.updates.length; index++) {
      this.#isAwaited[index] = options.awaits === undefined || options.awaits(index) ? 1 : 0;
    }
    this.#awaitedLeft = this.#isAwaited.reduce((sum, flag) => sum + flag, 0);
    this.#done = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
    if (this.#awaitedLeft === 0) this.#resolveDone();
  }

  /** Resolves once every awaited update (by default: all) has been processed. */
  get done(): Promise<void> {
    return this.#done;
  }

  get finished(): number {
    return this.#finished;
  }

  #run(update: Update): Promise<void> | undefined {
    const index = this.#indexOf(update);
    const principal = this.#stream.principalOf[index] as number;
    if (!Number.isNaN(this.#queueingMs[index] as number)) this.#duplicates++;
    else if ((this.#highestStarted[principal] as number) > index) this.#outOfOrder++;
    const startedAt = performance.now();
    this.#queueingMs[index] =
      startedAt - this.#startedAt - (this.#stream.arrivalMs[index] as number);
    if (this.#running[principal] === 1) this.#overlapping++;
    this.#highestStarted[principal] = Math.max(this.#highestStarted[principal] as number, index);
    this.#running[principal] = 1;
    const io = this.#stream.ioMs[index] as number;
    if (io === 0) {
      this.#heldMs[index] = 0;
      this.#end(principal, index);
      return undefined;
    }
    return new Promise<void>((resolve) => {
      setTimeout(() => {
        this.#heldMs[index] = performance.now() - startedAt;
        this.#end(principal, index);
        resolve();
      }, io);
    });
  }

  #end(principal: number, index: number): void {
    this.#running[principal] = 0;
    this.#finished++;
    if (this.#isAwaited[index] === 1 && --this.#awaitedLeft === 0) {
      this.#lastEnd = performance.now();
      this.#resolveDone();
    }
  }

  /** The measurements so far. */
  trace(): ReplayTrace {
    return {
      queueingMs: this.#queueingMs,
      finished: this.#finished,
      outOfOrderStarts: this.#outOfOrder,
      overlappingStarts: this.#overlapping,
      duplicateStarts: this.#duplicates,
      makespanMs: (this.#lastEnd || performance.now()) - this.#startedAt,
      heldMs: this.#heldMs,
    };
  }
}

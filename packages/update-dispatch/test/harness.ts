// Test harness: a recording processor (which updates started and finished in which order, how
// many ran at once, gates that hold an update until the test releases it) and a full principal.

import type { Update } from "@grammyjs/types";
import { createDeferred, type Deferred, ManualClock } from "@telepace/core";
import { UpdateDispatcher, type UpdateProcessor } from "../src/index.js";
import { privateMessage } from "./fixtures.js";

export interface Recorder {
  readonly processor: UpdateProcessor;
  readonly started: number[];
  readonly finished: number[];
  readonly signals: Map<number, AbortSignal>;
  /** Makes the processor of `updateId` wait until the returned deferred is resolved. */
  gate(updateId: number): Deferred<void>;
  readonly running: number;
  readonly maxRunning: number;
}

export function recorder(): Recorder {
  const started: number[] = [];
  const finished: number[] = [];
  const signals = new Map<number, AbortSignal>();
  const gates = new Map<number, Deferred<void>>();
  let running = 0;
  let maxRunning = 0;
  const processor: UpdateProcessor = async (update: Update, signal: AbortSignal) => {
    started.push(update.update_id);
    signals.set(update.update_id, signal);
    running++;
    maxRunning = Math.max(maxRunning, running);
    try {
      await gates.get(update.update_id)?.promise;
    } finally {
      running--;
      finished.push(update.update_id);
    }
  };
  return {
    processor,
    started,
    finished,
    signals,
    gate(updateId) {
      const gate = createDeferred<void>();
      gates.set(updateId, gate);
      return gate;
    },
    get running() {
      return running;
    },
    get maxRunning() {
      return maxRunning;
    },
  };
}

/** Lets every pending promise continuation run (one macrotask turn). */
export function settle(): Promise<void> {
  return new ManualClock().flush();
}

/**
 * A dispatcher (queues of one per principal) whose principal 42 is full: update 1 runs, held by
 * `gate`, and update 2 waits in its queue, so the next update of 42 waits or is rejected.
 */
export async function fullPrincipal() {
  const rec = recorder();
  const dispatcher = new UpdateDispatcher(rec.processor, { maxQueuedPerPrincipal: 1 });
  const gate = rec.gate(1);
  await dispatcher.enqueue(privateMessage(1, 42));
  await dispatcher.enqueue(privateMessage(2, 42));
  return { rec, dispatcher, gate };
}

// The contenders of the dispatch comparison, each driven as its documentation shows, and a direct
// call of the processor as the floor.

import { createConcurrentSink, createRunner, createSource, sequentialize } from "@grammyjs/runner";
import type { Update } from "@grammyjs/types";
import { UpdateDispatcher } from "@telepace/update-dispatch";
import type { ReplayRecorder, UpdateFeed } from "./replay.js";
import { principalConstraint } from "./workload.js";

/** getUpdates hands out at most 100 updates per call; both pollers use the same limit. */
export const POLL_LIMIT = 100;

/** What a contender reports besides the recorder's trace. */
export interface ContenderReport {
  /** Updates refused or lost by the contender (never processed). */
  readonly lost: number;
  /** Processor failures the contender reported. */
  readonly errors: number;
}

/** One side of the comparison. */
export interface DispatchContender {
  readonly name: string;
  /** The settings it runs with, for the report. */
  readonly settings: Readonly<Record<string, number | string>>;
  /**
   * Replays the feed through the contender into `recorder.process` until every update finished.
   * `held()` may be polled meanwhile: updates accepted and not finished.
   */
  run(feed: UpdateFeed, recorder: ReplayRecorder, total: number): Promise<ContenderReport>;
  /** Updates held inside the contender now (accepted, not finished). */
  held(): number;
}

/** UpdateDispatcher, fed as its README's long-polling loop does (`wait: true`, whole batches). */
export function telepaceDispatcher(options: { maxConcurrency: number }): DispatchContender {
  let dispatcher: UpdateDispatcher | undefined;
  return {
    name: `telepace UpdateDispatcher (maxConcurrency ${options.maxConcurrency})`,
    settings: {
      maxConcurrency: options.maxConcurrency,
      maxQueuedPerPrincipal: 32,
      maxActivePrincipals: 256,
    },
    held() {
      if (dispatcher === undefined) return 0;
      const snapshot = dispatcher.snapshot();
      return snapshot.queued + snapshot.inFlight + snapshot.waiting;
    },
    async run(feed, recorder) {
      let errors = 0;
      const active = new UpdateDispatcher((update) => recorder.process(update), {
        maxConcurrency: options.maxConcurrency,
        logger: {
          debug: () => {},
          info: () => {},
          warn: () => {
            errors++;
          },
          error: () => {
            errors++;
          },
        },
      });
      dispatcher = active;
      let lost = 0;
      while (!feed.isExhausted) {
        const batch = await feed.supply(POLL_LIMIT);
        const results = await Promise.all(
          batch.map((update) => active.enqueue(update, { wait: true })),
        );
        for (const result of results) if (result.status !== "accepted") lost++;
      }
      await recorder.done;
      await active.close();
      return { lost, errors };
    },
  };
}

/**
 * grammY runner: `createSource` over the feed, `createConcurrentSink` whose consumer runs the
 * `sequentialize` middleware with the principal constraint, joined by `createRunner` — what
 * `run(bot)` builds, minus the Bot (so grammY's own middleware costs are not counted).
 */
export function grammyRunner(options: { concurrency: number; label?: string }): DispatchContender {
  let size: (() => number) | undefined;
  return {
    name: `grammY runner + sequentialize (concurrency ${options.concurrency}${options.label ?? ""})`,
    settings: { concurrency: options.concurrency },
    held: () => size?.() ?? 0,
    async run(feed, recorder) {
      let errors = 0;
      const ordered = sequentialize<Update>(principalConstraint);
      const sink = createConcurrentSink<Update>(
        { consume: (update) => ordered(update, () => recorder.process(update)) },
        async () => {
          errors++;
        },
        { concurrency: options.concurrency },
      );
      size = sink.size;
      const source = createSource<Update>({
        // Like the runner's own fetcher, ask for between 1 and 100 updates (getUpdates' limit).
        supply: (batchSize, signal) =>
          feed.supply(Math.max(1, Math.min(batchSize, POLL_LIMIT)), signal as AbortSignal),
      });
      const runner = createRunner(source, sink);
      runner.start();
      await recorder.done;
      await runner.stop();
      return { lost: 0, errors };
    },
  };
}

/** The floor: the processor awaited update after update, with no scheduling at all. */
export function directCalls(): DispatchContender {
  return {
    name: "direct calls (no dispatcher, sequential)",
    settings: {},
    held: () => 0,
    async run(feed, recorder) {
      while (!feed.isExhausted) {
        for (const update of await feed.supply(POLL_LIMIT)) await recorder.process(update);
      }
      await recorder.done;
      return { lost: 0, errors: 0 };
    },
  };
}

// A flood: far more updates waiting than any bound, made on demand so the workload itself holds
// no memory, through the intake (getUpdates with offsets; its memory journal, or a file journal)
// and through grammY runner's source; the drain rate is each side's cost per update, and the peak
// heap shows whether memory stays flat as the flood grows.

import { createConcurrentSink, createRunner, createSource, sequentialize } from "@grammyjs/runner";
import type { Update } from "@grammyjs/types";
import { UpdateIntake } from "@telepace/update-dispatch";
import { collectGarbage, HeapSampler } from "../heap.js";
import { type RunJournal, temporaryFileJournal } from "./temporary-journal.js";
import { principalConstraint } from "./workload.js";

const PRINCIPALS = 2_000;
/** The shortest pause between two forced collections for the live heap, ms. */
const LIVE_SAMPLE_MS = 100;
const FIRST_USER_ID = 100_000;

function floodUpdate(id: number): Update {
  const userId = FIRST_USER_ID + (id % PRINCIPALS);
  const from = { id: userId, is_bot: false, first_name: "User" };
  return {
    update_id: id,
    message: {
      message_id: id,
      date: 1_767_225_600,
      chat: { id: userId, type: "private", first_name: "User" },
      from,
      text: `message ${id}`,
    },
  } as Update;
}

/** `total` updates waiting at once, handed out from the confirmed offset like getUpdates. */
class Flood {
  readonly total: number;
  /** Calls that returned updates. */
  fetches = 0;
  #confirmed = 1;

  constructor(total: number) {
    this.total = total;
  }

  /**
   * getUpdates: confirms everything below `offset`, returns up to `limit` from there. It answers
   * after a turn of the event loop, as a network call would (timers, the heap samplers among
   * them, run in between).
   */
  async getUpdates(offset: number | undefined, limit: number): Promise<Update[]> {
    await new Promise((resolve) => setImmediate(resolve));
    if (offset !== undefined) this.#confirmed = Math.max(this.#confirmed, offset);
    const end = Math.min(this.total + 1, this.#confirmed + limit);
    const batch: Update[] = [];
    for (let id = this.#confirmed; id < end; id++) batch.push(floodUpdate(id));
    if (batch.length > 0) this.fetches++;
    return batch;
  }
}

/** What one flood run measured. */
export interface FloodRun {
  readonly contender: string;
  readonly updates: number;
  readonly finished: number;
  /** Highest heap in use sampled every 5 ms, above the post-GC baseline (includes garbage). */
  readonly peakHeapAboveBaselineBytes: number;
  /** Highest heap in use right after a full collection (see `sampleLive`), above the baseline. */
  readonly peakLiveAboveBaselineBytes: number;
  /** Heap in use after a full collection once the run ended, above the baseline. */
  readonly retainedAboveBaselineBytes: number;
  readonly isCollected: boolean;
  /**
   * Time to drain the flood outside the harness's own forced collections (`wallMs` −
   * `forcedGcMs`): what the drain rate is computed from, so a collection that takes longer on a
   * busy machine does not decide the ratio.
   */
  readonly durationMs: number;
  /** Wall time from the start to the last update finished, forced collections included. */
  readonly wallMs: number;
  /** Of `wallMs`, the time in the forced full collections (for the live heap). */
  readonly forcedGcMs: number;
  /** CPU time of the process (user + system, every thread) per update, forced collections excluded, µs. */
  readonly cpuMicrosPerUpdate: number;
  /** getUpdates calls that returned updates. */
  readonly fetches: number;
}

/** A long poll with nothing to return: answers empty once `signal` aborts. */
const idle = (signal: AbortSignal): Promise<Update[]> =>
  signal.aborted
    ? Promise.resolve([])
    : new Promise((resolve) => signal.addEventListener("abort", () => resolve([]), { once: true }));

/** How a flood run measures. */
export interface FloodOptions {
  /**
   * Whether it forces full collections during the run for the live heap (see `sampleLive`).
   * Without them the run measures its drain rate alone: a forced collection leaves the heap and
   * the compiled code it stopped in a state the run then pays for, which the rate cannot leave
   * out the way it leaves out the collection itself. @defaultValue true
   */
  readonly isLiveSampled?: boolean;
}

async function measure(
  contender: string,
  total: number,
  drive: (flood: Flood, finish: () => void, done: Promise<void>) => Promise<void>,
  options: FloodOptions,
): Promise<FloodRun> {
  collectGarbage();
  const flood = new Flood(total);
  let finished = 0;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const finish = (): void => {
    if (++finished === total) resolveDone();
  };
  const heap = new HeapSampler(5);
  const baseline = process.memoryUsage().heapUsed;
  let peakLive = baseline;
  let forcedGcMs = 0;
  let forcedGcMicros = 0;
  // A full collection every 100 ms, or 4× its own length after one that took longer: on a busy
  // machine one took up to hundreds of ms, and back to back they made up over 90% of a run's
  // wall time, which the rate leaves out anyway. Live memory that stays flat peaks the same.
  let live: NodeJS.Timeout | undefined;
  const sampleLive = (): void => {
    const cpuBefore = process.cpuUsage();
    const collectedAt = performance.now();
    if (!collectGarbage()) return;
    const tookMs = performance.now() - collectedAt;
    forcedGcMs += tookMs;
    const cpu = process.cpuUsage(cpuBefore);
    forcedGcMicros += cpu.user + cpu.system;
    peakLive = Math.max(peakLive, process.memoryUsage().heapUsed);
    live = setTimeout(sampleLive, Math.max(LIVE_SAMPLE_MS, 4 * tookMs));
  };
  if (options.isLiveSampled !== false) live = setTimeout(sampleLive, LIVE_SAMPLE_MS);
  const cpuAtStart = process.cpuUsage();
  const startedAt = performance.now();
  await drive(flood, finish, done);
  const wallMs = performance.now() - startedAt;
  const cpu = process.cpuUsage(cpuAtStart);
  clearTimeout(live);
  const reading = heap.stop();
  collectGarbage();
  const retained = process.memoryUsage().heapUsed - baseline;
  return {
    contender,
    updates: total,
    finished,
    peakHeapAboveBaselineBytes: reading.peakAboveBaselineBytes,
    peakLiveAboveBaselineBytes: Math.max(0, peakLive - baseline),
    retainedAboveBaselineBytes: Math.max(0, retained),
    isCollected: reading.isCollected,
    durationMs: wallMs - forcedGcMs,
    wallMs,
    forcedGcMs,
    cpuMicrosPerUpdate: (cpu.user + cpu.system - forcedGcMicros) / Math.max(1, finished),
    fetches: flood.fetches,
  };
}

/**
 * The intake with its defaults and `maxConcurrency`, an `async () => {}`-like processor; with
 * `journal: "file"`, over a FileUpdateJournal in a temporary directory (every batch is synced
 * before the next poll confirms it).
 */
export function floodIntake(
  total: number,
  maxConcurrency: number,
  journal: "memory" | "file" = "memory",
  options: FloodOptions = {},
): Promise<FloodRun> {
  const label = journal === "file" ? " + FileUpdateJournal" : "";
  return measure(
    `telepace UpdateIntake${label} (maxConcurrency ${maxConcurrency})`,
    total,
    async (flood, finish, done) => {
      const opened: RunJournal | undefined =
        journal === "file" ? await temporaryFileJournal() : undefined;
      const intake = new UpdateIntake(
        async () => {
          finish();
        },
        {
          getUpdates: async (params, { signal }) => {
            const batch = await flood.getUpdates(params.offset, params.limit);
            return batch.length > 0 ? batch : idle(signal);
          },
          dispatcher: { maxConcurrency },
          journal: opened?.journal,
        },
      );
      const stopping = new AbortController();
      const polling = intake.run({ signal: stopping.signal });
      await done;
      stopping.abort();
      await polling;
      await intake.close({ timeoutMs: 0 });
      await opened?.dispose();
    },
    options,
  );
}

/** grammY runner's source and concurrent sink with `sequentialize`, the same processor. */
export function floodRunner(
  total: number,
  concurrency: number,
  label = "",
  options: FloodOptions = {},
): Promise<FloodRun> {
  return measure(
    `grammY runner + sequentialize (concurrency ${concurrency}${label})`,
    total,
    async (flood, finish, done) => {
      const ordered = sequentialize<Update>(principalConstraint);
      const sink = createConcurrentSink<Update>(
        {
          consume: (update) =>
            ordered(update, async () => {
              finish();
            }),
        },
        async () => {},
        { concurrency },
      );
      let offset: number | undefined;
      const source = createSource<Update>({
        supply: async (batchSize, signal) => {
          // The runner's fetcher: the next offset is the last fetched id + 1, set on fetch.
          const batch = await flood.getUpdates(offset, Math.max(1, Math.min(batchSize, 100)));
          const last = batch[batch.length - 1];
          if (last !== undefined) offset = last.update_id + 1;
          return batch.length > 0 ? batch : idle(signal as AbortSignal);
        },
      });
      const runner = createRunner(source, sink);
      runner.start();
      await done;
      await runner.stop();
    },
    options,
  );
}

// One run of one gate over a set of files, in virtual time: a ManualClock drives the link, the
// file starts and the gate's own clock, so what is measured is the gate's scheduling alone. Each
// file keeps at most a window of Range requests asked for at once, as a downloader does.

import { ManualClock } from "@telepace/core";
import { chunksOf, type FilePlan } from "./files.js";
import type { GateFactory } from "./gates.js";
import { type LinkCounters, type LinkModel, TimedLink } from "./link.js";

/** One file's download as measured. */
export interface FileRun {
  readonly name: string;
  readonly kind: "small" | "large";
  readonly sizeBytes: number;
  readonly startMs: number;
  /** From the file's start to its last byte, ms. */
  readonly durationMs: number;
}

/** How the files are fetched: the same for every contender. */
export interface FetchPlan {
  /** Range requests a file has asked its gate for and not yet received, at most. */
  readonly requestWindow: number;
  /** Seed of the link's round-trip jitter. */
  readonly seed: number;
}

/** What one run measured. */
export interface GateRun {
  readonly gate: string;
  readonly settings: Readonly<Record<string, number | string | boolean>>;
  readonly files: FileRun[];
  /** From the first start to the last byte, ms. */
  readonly makespanMs: number;
  readonly bytes: number;
  readonly peakBytesInFlight: number;
  /** Bytes each file had received when the first file finished. */
  readonly bytesAtFirstFinish: number[];
  readonly link: LinkCounters;
}

/** Downloads `files` through the gate `makeGate` builds, over a fresh simulated link. */
export async function simulate(
  makeGate: GateFactory,
  files: readonly FilePlan[],
  model: LinkModel,
  plan: FetchPlan,
): Promise<GateRun> {
  if (!(Number.isInteger(plan.requestWindow) && plan.requestWindow >= 1)) {
    throw new RangeError(
      `Expected \`requestWindow\` to be an integer >= 1, got ${String(plan.requestWindow)}`,
    );
  }
  const clock = new ManualClock();
  const link = new TimedLink({ clock, ...model, seed: plan.seed });
  const gate = makeGate(clock);
  const received = (): number[] => files.map((_, index) => link.deliveredTo(index));
  let bytesAtFirstFinish: number[] | undefined;
  let inFlight = 0;
  let peakInFlight = 0;
  const downloads = Promise.all(
    files.map(async (file, index): Promise<FileRun> => {
      if (file.startMs > 0) await clock.sleep(file.startMs);
      const startedAt = clock.now();
      const transfer = gate.open(file);
      const chunks = chunksOf(file.sizeBytes);
      let next = 0;
      // Each lane asks for the next chunk once its previous one arrived: a window of requests.
      const lane = async (): Promise<void> => {
        for (let chunk = chunks[next++]; chunk !== undefined; chunk = chunks[next++]) {
          const { length } = chunk;
          await transfer.run(length, async () => {
            inFlight += length;
            peakInFlight = Math.max(peakInFlight, inFlight);
            try {
              await link.fetch(length, index);
            } finally {
              inFlight -= length;
            }
          });
        }
      };
      try {
        await Promise.all(
          Array.from({ length: Math.min(plan.requestWindow, chunks.length) }, lane),
        );
      } finally {
        transfer.close();
      }
      bytesAtFirstFinish ??= received();
      return {
        name: file.name,
        kind: file.kind,
        sizeBytes: file.sizeBytes,
        startMs: file.startMs,
        durationMs: clock.now() - startedAt,
      };
    }),
  );
  let isDone = false;
  const done = downloads.finally(() => {
    isDone = true;
  });
  await clock.runAll(1_000_000);
  await clock.flush();
  if (!isDone) throw new Error(`${gate.name}: downloads still waiting with no timer left`);
  const runs = await done;
  const makespanMs = clock.now();
  await gate.dispose();
  return {
    gate: gate.name,
    settings: gate.settings,
    files: runs,
    makespanMs,
    bytes: files.reduce((sum, file) => sum + file.sizeBytes, 0),
    peakBytesInFlight: peakInFlight,
    bytesAtFirstFinish: bytesAtFirstFinish ?? [],
    link: link.counters,
  };
}

// One run of one gate over a set of files, in virtual time: a ManualClock drives the link, the
// file starts and the gate's own clock, so what is measured is the gate's scheduling alone.

import { ManualClock } from "@telepace/core";
import { chunksOf, type FilePlan } from "./files.js";
import type { GateFactory } from "./gates.js";
import { TimedLink } from "./link.js";

/** The link every run shares. */
export interface LinkModel {
  readonly bytesPerSecond: number;
  /** Mean round trip, ms. */
  readonly roundTripMs: number;
  /** Round trips vary uniformly by ± this fraction (seeded). */
  readonly roundTripJitter: number;
}

/** One file's download as measured. */
export interface FileRun {
  readonly name: string;
  readonly kind: "small" | "large";
  readonly sizeBytes: number;
  readonly startMs: number;
  /** From the file's start to its last byte, ms. */
  readonly durationMs: number;
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
  /**
   * Bytes each file had received when every file had a response flowing (all backlogged), or
   * `undefined` when the first file finished before that.
   */
  readonly bytesWhenAllFlowing: number[] | undefined;
}

/** Downloads `files` through the gate `makeGate` builds, over a fresh simulated link. */
export async function simulate(
  makeGate: GateFactory,
  files: readonly FilePlan[],
  model: LinkModel,
): Promise<GateRun> {
  const clock = new ManualClock();
  const link = new TimedLink({ clock, ...model, seed: 1 });
  const gate = makeGate(clock);
  const received = (): number[] => files.map((_, index) => link.deliveredTo(index));
  const flowing = new Set<number>();
  let bytesAtFirstFinish: number[] | undefined;
  let bytesWhenAllFlowing: number[] | undefined;
  let inFlight = 0;
  let peakInFlight = 0;
  const downloads = Promise.all(
    files.map(async (file, index): Promise<FileRun> => {
      if (file.startMs > 0) await clock.sleep(file.startMs);
      const startedAt = clock.now();
      const transfer = gate.open(file);
      try {
        await Promise.all(
          chunksOf(file.sizeBytes).map((chunk) =>
            transfer.run(chunk.length, async () => {
              inFlight += chunk.length;
              peakInFlight = Math.max(peakInFlight, inFlight);
              try {
                await link.fetch(chunk.length, index, () => {
                  if (flowing.has(index)) return;
                  flowing.add(index);
                  if (flowing.size === files.length && bytesAtFirstFinish === undefined) {
                    bytesWhenAllFlowing = received();
                  }
                });
              } finally {
                inFlight -= chunk.length;
              }
            }),
          ),
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
    bytesWhenAllFlowing,
  };
}

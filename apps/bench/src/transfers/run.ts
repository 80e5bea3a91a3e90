// The transfer comparison: downloads over a simulated file-server link gated by the media
// scheduler, by p-queue or by nothing — small files while large ones run, at a light and a
// loaded mix and at several round trips; fairness between equal files; grant overhead. Every
// scenario repeats in rounds with the contenders interleaved; the summary holds medians.

import type { AreaResult } from "../report.js";
import { type Rounds, roundSummary, runRounds } from "../rounds.js";
import { ratio } from "../stats.js";
import { type TransfersConfig, transfersConfig } from "./config.js";
import {
  type Contender,
  fairnessContenders,
  mixedContenders,
  ROUND_TRIP_IDS,
} from "./contenders.js";
import { fairnessFigures, type MixedFigures, mixedFigures } from "./figures.js";
import { CHUNK_BYTES, equalPlans, type FilePlan, mixedPlans } from "./files.js";
import { linkFloor } from "./floor.js";
import { GRANT_CONTENDERS, type GrantSample, grantLoop, warmUpGrantLoops } from "./grants.js";
import type { LinkModel } from "./link.js";
import type { RoundTripRounds, TransfersMeasurements } from "./measurements.js";
import { simulate } from "./simulate.js";
import { transfersTables } from "./tables.js";

export type { TransfersConfig } from "./config.js";

/** A 20 MiB file is large (the scheduler's threshold). */
const LARGE_THRESHOLD_BYTES = 20 * 1024 * 1024;

/** Runs the transfer comparison. */
export async function runTransfers(config: TransfersConfig = transfersConfig): Promise<AreaResult> {
  const startedAt = performance.now();
  const measured = await measure(config);
  return {
    area: "transfers",
    tables: transfersTables(measured),
    durationMs: performance.now() - startedAt,
    figures: {
      config: { ...config, chunkBytes: CHUNK_BYTES },
      summary: measured.summary,
      floor: measured.floor,
      // Each scenario's rounds (seeds, orders) and every round's figures, by contender.
      mixed: measured.mixed,
      loaded: measured.loaded,
      byRoundTrip: measured.byRoundTrip,
      fairness: measured.fairness,
      grants: measured.grants,
    },
  };
}

function roundTripContenders(): Contender[] {
  const ids: readonly string[] = ROUND_TRIP_IDS;
  return mixedContenders().filter((contender) => ids.includes(contender.id));
}

async function measure(config: TransfersConfig): Promise<TransfersMeasurements> {
  const options = { rounds: config.rounds, seed: config.seed };
  const mixedRounds = (
    contenders: readonly Contender[],
    link: LinkModel,
    files: (seed: number) => readonly FilePlan[],
  ): Promise<Rounds<MixedFigures>> =>
    runRounds(contenders, options, async (contender, round) =>
      mixedFigures(
        await simulate(contender.make, files(round.seed), link, {
          requestWindow: config.requestWindow,
          seed: round.seed,
        }),
        link,
      ),
    );
  const light = (seed: number): FilePlan[] => mixedPlans(config.mixed, seed);
  const loadedFiles = (seed: number): FilePlan[] =>
    mixedPlans({ ...config.mixed, large: config.loadedLarge }, seed);
  const mixed = await mixedRounds(mixedContenders(), config.link, light);
  const loaded = await mixedRounds(mixedContenders(), config.link, loadedFiles);
  const byRoundTrip: RoundTripRounds[] = [];
  for (const roundTripMs of config.roundTripsMs) {
    const link = { ...config.link, roundTripMs };
    byRoundTrip.push({
      roundTripMs,
      rounds: await mixedRounds(roundTripContenders(), link, light),
    });
  }
  const equalFiles = equalPlans(config.equal.count, config.equal.sizeBytes, LARGE_THRESHOLD_BYTES);
  const fairness = await runRounds(fairnessContenders(), options, async (contender, round) =>
    fairnessFigures(
      await simulate(contender.make, equalFiles, config.link, {
        requestWindow: config.requestWindow,
        seed: round.seed,
      }),
      config.link,
    ),
  );
  const floor = await linkFloor(config.link, config.mixed.small.maxBytes);
  await warmUpGrantLoops(config.grants);
  const grants = await runRounds(GRANT_CONTENDERS, options, (contender) =>
    grantLoop(config.grants, contender.id),
  );
  const smallP99 = (figures: MixedFigures): number => figures.smallCompletionMs.p99;
  const overhead = (result: (id: string) => GrantSample, id: string): number =>
    result(id).cpuMs - result("none").cpuMs;
  const summary = roundSummary(config.rounds, {
    linkRttMs: mixed.perRound((result) => result("defaults").firstByteMs),
    smallP99VsPqueueSmallFirst: mixed.perRound((result) =>
      ratio(smallP99(result("defaults")), smallP99(result("pQueueSmallFirst"))),
    ),
    smallP99VsLinkFloor: mixed.perRound((result) =>
      ratio(smallP99(result("defaults")), floor.coldMs),
    ),
    smallP99VsPqueueFifo: mixed.perRound((result) =>
      ratio(smallP99(result("defaults")), smallP99(result("pQueueFifo"))),
    ),
    smallP99VsPqueueSmallFirstLoaded: loaded.perRound((result) =>
      ratio(smallP99(result("defaults")), smallP99(result("pQueueSmallFirst"))),
    ),
    jainEqualFilesDefaults: fairness.perRound((result) => result("defaults").jain),
    throughputVsLink: mixed.perRound((result) => result("defaults").throughputVsLink),
    throughputVsNoLimit: mixed.perRound((result) =>
      ratio(result("defaults").throughputVsLink, result("noLimit").throughputVsLink),
    ),
    throughputVsLinkLoaded: loaded.perRound((result) => result("defaults").throughputVsLink),
    largeMeanVsNoLimit: mixed.perRound((result) =>
      ratio(result("defaults").largeCompletionMs.mean, result("noLimit").largeCompletionMs.mean),
    ),
    grantCostVsPqueue: grants.perRound((result) =>
      ratio(overhead(result, "scheduler"), overhead(result, "p-queue")),
    ),
  });
  return { config, summary, floor, mixed, loaded, byRoundTrip, fairness, grants };
}

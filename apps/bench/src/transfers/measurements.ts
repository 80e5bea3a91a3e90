// What the transfer comparison measured: the headline summary and every scenario's rounds, as
// the tables and results/latest.json read them.

import type { RoundSummary, Rounds } from "../rounds.js";
import type { TransfersConfig } from "./config.js";
import type { FairnessFigures, MixedFigures } from "./figures.js";
import type { LinkFloor } from "./floor.js";
import type { GrantSample } from "./grants.js";

/** The headline figures, as `areas.transfers.summary` in results/latest.json. */
export type TransfersSummary = RoundSummary<
  | "linkRttMs"
  | "smallP99VsPqueueSmallFirst"
  | "smallP99VsLinkFloor"
  | "smallP99VsPqueueFifo"
  | "smallP99VsPqueueSmallFirstLoaded"
  | "jainEqualFilesDefaults"
  | "throughputVsLink"
  | "throughputVsNoLimit"
  | "throughputVsLinkLoaded"
  | "largeMeanVsNoLimit"
  | "grantCostVsPqueue"
>;

/** The mixed load at one mean round trip. */
export interface RoundTripRounds {
  readonly roundTripMs: number;
  readonly rounds: Rounds<MixedFigures>;
}

/** Everything the area measured, for the tables and the JSON. */
export interface TransfersMeasurements {
  readonly config: TransfersConfig;
  readonly summary: TransfersSummary;
  readonly floor: LinkFloor;
  readonly mixed: Rounds<MixedFigures>;
  readonly loaded: Rounds<MixedFigures>;
  readonly byRoundTrip: readonly RoundTripRounds[];
  readonly fairness: Rounds<FairnessFigures>;
  readonly grants: Rounds<GrantSample>;
}

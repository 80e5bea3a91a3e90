// One fast-check seed for every property test of a run (vitest's globalSetup): FC_SEED when it is
// given, to replay a failure, else a fresh one. It is printed once, so a CI log reproduces a run.

import type { TestProject } from "vitest/node";

declare module "vitest" {
  interface ProvidedContext {
    /** The seed `fast-check-setup.ts` configures fast-check with. */
    fastCheckSeed: number;
  }
}

/**
 * The seed FC_SEED names, or a fresh one when it is unset.
 * @throws {RangeError} when FC_SEED is not an integer (fast-check takes 32-bit seeds).
 */
export function fastCheckSeedOf(given: string | undefined): number {
  if (given === undefined || given === "") return Math.floor(Math.random() * 2 ** 31);
  const seed = Number(given);
  if (!Number.isSafeInteger(seed) || Math.abs(seed) >= 2 ** 31) {
    throw new RangeError(
      `Expected FC_SEED to be an integer in ±2^31, got ${JSON.stringify(given)}`,
    );
  }
  return seed;
}

export default function setup(project: TestProject): void {
  const isGiven = process.env.FC_SEED !== undefined && process.env.FC_SEED !== "";
  const seed = fastCheckSeedOf(process.env.FC_SEED);
  // Every project of this run gets the same seed, and the log says it once.
  if (!isGiven) {
    process.env.FC_SEED = String(seed);
    console.log(`fast-check seed ${seed} for every property test; FC_SEED=${seed} replays it`);
  } else if (process.env.TELEPACE_FC_SEED_LOGGED !== String(seed)) {
    console.log(`fast-check seed ${seed} (from FC_SEED) for every property test`);
  }
  process.env.TELEPACE_FC_SEED_LOGGED = String(seed);
  project.provide("fastCheckSeed", seed);
}

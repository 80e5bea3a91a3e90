// Every test file's fast-check runs from the run's seed (see fast-check-seed.ts) with a known
// count: 100 runs unless a property names its own `numRuns`. A failure prints its seed and path.

import fc from "fast-check";
import { inject } from "vitest";

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: inject("fastCheckSeed"), numRuns: 100 });

// The shape of a benchmark run's output: tables to print and every figure for the JSON file.

import type { Environment } from "./environment.js";
import type { Table } from "./table.js";

/** What one area (writes, dispatch, transfers) produced. */
export interface AreaResult {
  readonly area: string;
  /** Tables to print, in order. */
  readonly tables: readonly Table[];
  /** Every figure, JSON-serialisable. */
  readonly figures: unknown;
  /** Real time the area took, ms. */
  readonly durationMs: number;
}

/** The JSON file written by a run. */
export interface BenchReport {
  readonly environment: Environment & {
    /** Whether the telepace packages ran from their build (as users run them) or from source. */
    readonly telepaceLoadedFrom: "dist" | "source";
  };
  /** The command-line areas and options of the run. */
  readonly invocation: readonly string[];
  readonly durationMs: number;
  readonly areas: Readonly<Record<string, AreaResult["figures"]>>;
}

/** Turns NaN and ±Infinity into strings so JSON keeps them (JSON.stringify would write null). */
export function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  if (value instanceof Float64Array || value instanceof Uint32Array) return Array.from(value);
  return value;
}

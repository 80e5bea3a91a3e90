// What one bench run covers: the rows every summary figure reads, or those and the rows only the
// tables show. `pnpm bench` runs the first and fits in ten minutes on two cores; `pnpm bench:full`
// adds the descriptive rows (see the README's "Running it").

/**
 * `"headline"`: every row a field of `areas.<area>.summary` reads, in every round it reads;
 * `"full"`: those and the rows no summary field reads (other configurations and peers, shown in
 * the tables only).
 */
export type BenchScope = "headline" | "full";

/** What the command line asks for: the areas (none: every area) and the scope. */
export interface BenchArguments {
  readonly areas: readonly string[];
  readonly scope: BenchScope;
}

/**
 * Reads `[area …] [--full]`. An unknown area or option throws, naming it and what is expected.
 */
export function parseBenchArguments(
  argv: readonly string[],
  knownAreas: readonly string[],
): BenchArguments {
  const options = argv.filter((argument) => argument.startsWith("-"));
  const unknownOptions = options.filter((option) => option !== "--full");
  if (unknownOptions.length > 0) {
    throw new RangeError(
      `Unknown option ${unknownOptions.map((option) => JSON.stringify(option)).join(", ")}; expected --full (the rows no summary field reads, too) or none`,
    );
  }
  const areas = argv.filter((argument) => !argument.startsWith("-"));
  const unknownAreas = areas.filter((name) => !knownAreas.includes(name));
  if (unknownAreas.length > 0) {
    throw new RangeError(
      `Unknown area ${unknownAreas.map((name) => JSON.stringify(name)).join(", ")}; expected any of ${knownAreas.join(", ")}`,
    );
  }
  return { areas: [...new Set(areas)], scope: options.length > 0 ? "full" : "headline" };
}

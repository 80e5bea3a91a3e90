// A package's runtime dependencies as its manifest states them, for the tests that keep a package
// free of what it must not pull in (an HTTP client, a Redis client).

import { readFileSync } from "node:fs";

/** The names of `dependencies`, `peerDependencies` and `optionalDependencies`, sorted. */
export function runtimeDependenciesOf(manifest: URL): string[] {
  const parsed = JSON.parse(readFileSync(manifest, "utf8")) as Record<
    string,
    Record<string, string> | undefined
  >;
  return Object.keys({
    ...parsed.dependencies,
    ...parsed.peerDependencies,
    ...parsed.optionalDependencies,
  }).sort();
}

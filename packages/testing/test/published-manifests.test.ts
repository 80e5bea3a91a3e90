// What every published package ships: pnpm replaces `exports` with `publishConfig.exports` when
// it packs, so that must be `exports` without the source condition (whose `src/` is not in the
// tarball) — kept equal to it here, so the two cannot drift apart.

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packagesDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

interface Manifest {
  readonly name: string;
  readonly private?: boolean;
  readonly exports?: unknown;
  readonly publishConfig?: { readonly exports?: unknown };
}

function withoutSource(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "@telepace/source")
      .map(([key, inner]) => [key, withoutSource(inner)]),
  );
}

const published = readdirSync(packagesDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map(
    (entry) =>
      JSON.parse(readFileSync(join(packagesDir, entry.name, "package.json"), "utf8")) as Manifest,
  )
  .filter((manifest) => manifest.private !== true);

describe("published manifests", () => {
  it("finds the published packages", () => {
    expect(published.map((manifest) => manifest.name)).toContain("@telepace/grammy");
  });

  it.each(published.map((manifest) => [manifest.name, manifest] as const))(
    "%s publishes its exports without the @telepace/source condition",
    (_name, manifest) => {
      expect(JSON.stringify(manifest.exports)).toContain('"@telepace/source"');
      expect(manifest.publishConfig?.exports).toEqual(withoutSource(manifest.exports));
      expect(JSON.stringify(manifest.publishConfig)).not.toContain("@telepace/source");
    },
  );
});

// The source folders are layers: each file imports only from its own folder or a lower layer, so
// the package has no import circle and every folder can be read without the ones above it.

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

/** Lower layers first; the root files sit at both ends (shared leaves, then the face). */
const LAYER: Readonly<Record<string, number>> = {
  "errors.ts": 0,
  "options.ts": 0,
  "diagnostics.ts": 0,
  "wire/": 1,
  "text/": 2,
  "world/": 2,
  "methods/": 3,
  "server/": 4,
  "control/": 5,
  "ui/": 6,
  "start.ts": 7,
  "index.ts": 8,
  "cli/": 8,
};

function unit(file: string): string {
  const slash = file.indexOf("/");
  return slash < 0 ? file : file.slice(0, slash + 1);
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [relative(SRC, join(dir, entry.name)).split("\\").join("/")]
        : [],
  );
}

describe("layers", () => {
  it("every file belongs to a layer and imports only its own folder or lower layers", () => {
    const upward: string[] = [];
    for (const file of sources(SRC)) {
      const own = LAYER[unit(file)];
      expect(own, `${file} has no layer`).toBeDefined();
      const text = readFileSync(join(SRC, file), "utf8");
      for (const [, spec] of text.matchAll(/from "(\.{1,2}\/[^"]+)"/g)) {
        const target = posix
          .normalize(posix.join(dirname(file), spec as string))
          .replace(/\.js$/, ".ts");
        const layer = LAYER[unit(target)];
        if (unit(target) !== unit(file) && (layer === undefined || layer >= (own as number))) {
          upward.push(`${file} -> ${target}`);
        }
      }
    }
    expect(upward).toEqual([]);
  });
});

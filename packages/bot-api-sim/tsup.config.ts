import { cpSync } from "node:fs";
import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.base.ts";

// The library ships ESM + CJS with types; the CLI is a program, so one ESM file is enough.
// Named entries keep the outputs flat (dist/index.js, dist/cli.js) whatever folder holds them.
// The chat page is plain files, no build step: they are copied to dist/page, which both bundles
// find beside themselves (shims give the CJS build the import.meta.url that locates it).
export default defineConfig([
  {
    ...libraryBuild([]),
    entry: { index: "src/index.ts" },
    shims: true,
    onSuccess: async () => {
      cpSync("src/ui/page", "dist/page", { recursive: true });
    },
  },
  {
    ...libraryBuild([]),
    entry: { cli: "src/cli/cli.ts" },
    format: ["esm"],
    dts: false,
    clean: false,
  },
]);

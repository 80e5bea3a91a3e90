import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.base.ts";

// The library ships ESM + CJS with types; the CLI is a program, so one ESM file is enough.
// Named entries keep the outputs flat (dist/index.js, dist/cli.js) whatever folder holds them.
export default defineConfig([
  { ...libraryBuild([]), entry: { index: "src/index.ts" } },
  {
    ...libraryBuild([]),
    entry: { cli: "src/cli/cli.ts" },
    format: ["esm"],
    dts: false,
    clean: false,
  },
]);

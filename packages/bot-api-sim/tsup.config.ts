import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.base.ts";

// Named entries keep the outputs flat (dist/index.js, dist/cli.js) whatever folder holds them.
export default defineConfig({
  ...libraryBuild([]),
  entry: { index: "src/index.ts", cli: "src/cli/cli.ts" },
});

import type { Options } from "tsup";

/** The build of every published package: ESM + CJS with types, for Node 20. */
export function libraryBuild(entry: string[]): Options {
  return {
    entry,
    format: ["esm", "cjs"],
    // node20 lowers `using` / `await using`, which Node 20 cannot parse natively.
    target: "node20",
    platform: "node",
    dts: true,
    // Maps point into the published `dist` only: embedding the sources made them 2.5x the code.
    sourcemap: true,
    esbuildOptions(options) {
      options.sourcesContent = false;
    },
    clean: true,
    splitting: false,
    treeshake: true,
  };
}

import { defineConfig } from "vitest/config";

// One run over every workspace project; `pnpm test` is this. CI sets TELEPACE_TEST_REPORT to a
// path to also get vitest's JSON report there (pnpm 12 will not forward reporter flags).
const report = process.env.TELEPACE_TEST_REPORT;

export default defineConfig({
  test: {
    // The grammY plugin runs a second time against the oldest grammY it claims.
    projects: ["packages/*", "apps/*", "packages/grammy/vitest.oldest.config.ts"],
    ...(report ? { reporters: ["default", "json"], outputFile: { json: report } } : {}),
    coverage: { provider: "v8", include: ["packages/*/src/**", "apps/*/src/**"] },
  },
});

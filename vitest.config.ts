import { defineConfig } from "vitest/config";

// One run over every workspace project; `pnpm test` is this.
export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*"],
    coverage: { provider: "v8", include: ["packages/*/src/**", "apps/*/src/**"] },
  },
});

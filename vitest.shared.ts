import { defaultServerConditions } from "vite";
import { defineProject } from "vitest/config";

// Tests resolve workspace packages from source through the `@telepace/source` export
// condition, so no build is needed before `pnpm test`.
export default defineProject({
  ssr: { resolve: { conditions: ["@telepace/source", ...defaultServerConditions] } },
  test: { environment: "node", include: ["test/**/*.test.ts"] },
});

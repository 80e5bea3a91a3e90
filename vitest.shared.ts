import { defaultServerConditions } from "vite";
import { defineProject } from "vitest/config";

// Tests resolve workspace packages from source through the `@telepace/source` export
// condition, so no build is needed before `pnpm test`.
//
// `test/**/*.test-d.ts` hold each package's type tests (expectTypeOf, @ts-expect-error): vitest
// runs them through tsc as tests of their own, next to the runtime tests.
//
// Scheduling assertions never depend on real time (a ManualClock drives them), so the timeout
// only catches hangs. It is generous because property tests are CPU-bound and the whole suite
// runs on two shared cores: one that takes 3 s alone took over 5 s under load.
export default defineProject({
  ssr: { resolve: { conditions: ["@telepace/source", ...defaultServerConditions] } },
  test: {
    environment: "node",
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"] },
  },
});

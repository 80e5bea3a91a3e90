import { defineProject } from "vitest/config";
import shared from "../../vitest.shared.ts";

// As in @telepace/metrics: vite's server conditions include `module`, which picks
// @opentelemetry/*'s bundler-only ESM build (extensionless imports Node cannot load); these
// conditions are Node's own, plus the workspace's source condition.
export default defineProject({
  ...shared,
  ssr: { resolve: { conditions: ["@telepace/source", "node"] } },
  test: { ...shared.test, name: "reference-bot" },
});

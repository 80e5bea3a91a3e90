import { defineProject } from "vitest/config";
import shared from "../../vitest.shared.ts";

// The package against the oldest grammY its peer range claims, installed as `grammy-oldest`:
// every `grammy` import of the sources and these tests resolves to it. Suites that load another
// grammY plugin from node_modules stay out (it would bring the newest grammY along).
export default defineProject({
  ...shared,
  resolve: { alias: [{ find: /^grammy(\/.*)?$/, replacement: "grammy-oldest$1" }] },
  test: {
    ...shared.test,
    name: "grammy-oldest",
    include: [
      "test/close-and-bounds.test.ts",
      "test/coalescing.test.ts",
      "test/example-bot.test.ts",
      "test/failures.test.ts",
      "test/method-classes.test.ts",
      "test/oldest-types.test.ts",
      "test/runner.test.ts",
      "test/streaming.test.ts",
      "test/webhook.test.ts",
    ],
    typecheck: { enabled: false },
  },
});

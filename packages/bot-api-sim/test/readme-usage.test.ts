// The README's Usage is a complete program: a grammY bot against a sim of its own. It runs as a
// user would run it, and prints the bot's reply.

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runUsageExample } from "@telepace/testing";
import { expect, it } from "vitest";

it("the README's Usage runs and the bot answers /start", async () => {
  const run = await runUsageExample(join(dirname(fileURLToPath(import.meta.url)), ".."));
  expect(run).toEqual({ exitCode: 0, stdout: "Welcome!\n", stderr: "" });
});

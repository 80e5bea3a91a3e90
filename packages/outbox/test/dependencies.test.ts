import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// The scheduler must install without an HTTP client: a user who puts the outbox under grammY or
// their own transport pulls in only @telepace/core (and the types-only @grammyjs/types).
describe("@telepace/outbox dependencies", () => {
  it("carry no HTTP client (undici lives in @telepace/client)", () => {
    const manifest = JSON.parse(
      readFileSync(new URL("../package.json", import.meta.url), "utf8"),
    ) as Record<string, Record<string, string> | undefined>;
    const runtime = {
      ...manifest.dependencies,
      ...manifest.peerDependencies,
      ...manifest.optionalDependencies,
    };
    expect(Object.keys(runtime).sort()).toEqual(["@grammyjs/types", "@telepace/core"]);
    expect(runtime).not.toHaveProperty("undici");
  });
});

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// A user installs the broadcast package next to the client or grammY they already have: it pulls
// in no HTTP client and no Redis client (RedisBroadcastStore lives in @telepace/redis).
describe("@telepace/broadcast dependencies", () => {
  it("are the outbox, core and the types-only @grammyjs/types", () => {
    const manifest = JSON.parse(
      readFileSync(new URL("../package.json", import.meta.url), "utf8"),
    ) as Record<string, Record<string, string> | undefined>;
    const runtime = {
      ...manifest.dependencies,
      ...manifest.peerDependencies,
      ...manifest.optionalDependencies,
    };
    expect(Object.keys(runtime).sort()).toEqual([
      "@grammyjs/types",
      "@telepace/core",
      "@telepace/outbox",
    ]);
  });
});

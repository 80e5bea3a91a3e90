import { runtimeDependenciesOf } from "@telepace/testing";
import { describe, expect, it } from "vitest";

// A user installs the broadcast package next to the client or grammY they already have: it pulls
// in no HTTP client and no Redis client (RedisBroadcastStore lives in @telepace/redis).
describe("@telepace/broadcast dependencies", () => {
  it("are the outbox, core and the types-only @grammyjs/types", () => {
    expect(runtimeDependenciesOf(new URL("../package.json", import.meta.url))).toEqual([
      "@grammyjs/types",
      "@telepace/core",
      "@telepace/outbox",
    ]);
  });
});

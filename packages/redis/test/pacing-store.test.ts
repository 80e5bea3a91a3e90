import type { ManualClock } from "@telepace/core";
import { describePacingProperties, describePacingStoreContract } from "@telepace/outbox/testing";
import { describeWithRedis } from "@telepace/testing";
import { RedisPacingStore } from "../src/index.js";
import { TrackedStore } from "./support/tracked-store.js";

let bots = 0;

describeWithRedis("RedisPacingStore", (server) => {
  const stores: RedisPacingStore[] = [];
  // A fresh bot id per store: each test and run starts from an empty keyspace.
  const fresh = (options: { readonly reserveAheadMs?: number } = {}) => {
    const store = new RedisPacingStore({
      redis: server().url,
      botId: ++bots,
      time: "caller",
      ...options,
    });
    stores.push(store);
    return store;
  };

  describePacingStoreContract("the PacingStore contract", () => fresh());

  let tracked: TrackedStore | undefined;
  const properties = (reserveAheadMs: number) => ({
    pacingStore: () => {
      for (const store of stores.splice(0)) void store.close();
      tracked = new TrackedStore(fresh({ reserveAheadMs }));
      return tracked;
    },
    run: (clock: ManualClock) => (tracked as TrackedStore).run(clock),
    runsScale: 1,
  });
  describePacingProperties(
    "the outbox's scheduling properties, slots reserved ahead",
    properties(1_000),
  );
  describePacingProperties("the outbox's scheduling properties, no reservations", properties(0));
});

import type { ManualClock } from "@telepace/core";
import { describePacingProperties } from "../../outbox/test/support/pacing-properties.js";
import { describePacingStoreContract } from "../../outbox/test/support/pacing-store-contract.js";
import { RedisPacingStore } from "../src/index.js";
import { describeWithRedis } from "./support/redis.js";
import { TrackedStore } from "./support/tracked-store.js";

let bots = 0;

describeWithRedis("RedisPacingStore", (server) => {
  const stores: RedisPacingStore[] = [];
  // A fresh bot id per store: each test and run starts from an empty keyspace.
  const fresh = () => {
    const store = new RedisPacingStore({ redis: server().url, botId: ++bots, time: "caller" });
    stores.push(store);
    return store;
  };

  describePacingStoreContract("the PacingStore contract", fresh);

  let tracked: TrackedStore | undefined;
  describePacingProperties("the outbox's scheduling properties", {
    pacingStore: () => {
      for (const store of stores.splice(0)) void store.close();
      tracked = new TrackedStore(fresh());
      return tracked;
    },
    run: (clock: ManualClock) => (tracked as TrackedStore).run(clock),
    runsScale: 1,
  });
});

import { MemoryPacingStore } from "../src/index.js";
import { describePacingProperties } from "./support/pacing-properties.js";

describePacingProperties("properties");

// Every global slot reserved ahead (as a shared store's are), the scheduling properties still hold.
describePacingProperties("properties, the store reserving global slots ahead", {
  pacingStore: () => new MemoryPacingStore({ reserveAheadMs: 1_000 }),
});

// `@telepace/outbox/testing`: the suites every PacingStore is held to, for a store that lives in
// another package of this workspace (`@telepace/redis`). Only the workspace's `@telepace/source`
// condition resolves this entry; it is not published.

export { describePacingProperties, type PropertyStore } from "./pacing-properties.js";
export { describePacingStoreContract } from "./pacing-store-contract.js";

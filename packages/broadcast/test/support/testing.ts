// `@telepace/broadcast/testing`: the suite every BroadcastStore is held to, for a store that lives
// in another package of this workspace (`@telepace/redis`). Only the workspace's
// `@telepace/source` condition resolves this entry; it is not published.

export { describeBroadcastStoreContract, type StoreUnderTest } from "./store-contract.js";

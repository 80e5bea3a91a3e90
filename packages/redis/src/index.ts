export type { RedisDurability } from "./durability.js";
export { RedisStoreError, type RedisStoreErrorCode } from "./errors.js";
export type { LeaseHolderOptions } from "./lease-holder.js";
export { botIdOf, DEFAULT_KEY_PREFIX, type RedisBotOptions } from "./namespace.js";
export {
  type RedisPacingStoreOptions,
  redisPacingStoreDefaults,
} from "./pacing-store-options.js";
export {
  RedisBroadcastStore,
  type RedisBroadcastStoreOptions,
} from "./redis-broadcast-store.js";
export {
  type JobCancelAnswer,
  type OrphanedJob,
  RedisJobRegistry,
  type RedisJobRegistryOptions,
  type RedisJobRegistrySnapshot,
  redisJobRegistryDefaults,
} from "./redis-job-registry.js";
export { RedisPacingStore, type RedisPacingStoreSnapshot } from "./redis-pacing-store.js";
export {
  type QueueAppendResult,
  type QueueClaim,
  type QueueClaimOptions,
  RedisUpdateQueue,
  type RedisUpdateQueueOptions,
  redisUpdateQueueDefaults,
} from "./redis-update-queue.js";
export {
  SharedPoller,
  type SharedPollerOptions,
  type SharedPollerSnapshot,
  sharedPollerDefaults,
} from "./shared-poller.js";
export {
  type SharedUpdateProcessor,
  SharedUpdateWorker,
  type SharedUpdateWorkerOptions,
  type SharedUpdateWorkerSnapshot,
  sharedUpdateWorkerDefaults,
} from "./shared-update-worker.js";

export { RedisStoreError, type RedisStoreErrorCode } from "./errors.js";
export { botIdOf, DEFAULT_KEY_PREFIX } from "./namespace.js";
export {
  RedisPacingStore,
  type RedisPacingStoreOptions,
  type RedisPacingStoreSnapshot,
} from "./redis-pacing-store.js";

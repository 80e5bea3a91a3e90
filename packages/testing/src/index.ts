export { type ChannelRecorder, recordChannels } from "./channel-recorder.js";
export { type EventuallyOptions, eventually } from "./eventually.js";
export { jainIndex } from "./jain-index.js";
export {
  hasRedisServer,
  REDIS_INSTALL_HINT,
  type RedisTestServer,
  redisSuiteMode,
  startRedis,
} from "./redis-server.js";
export { type LogCall, type SpyLogger, spyLogger } from "./spy-logger.js";

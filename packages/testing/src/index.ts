export { type ChannelRecorder, recordChannels } from "./channel-recorder.js";
export { describeWithRedis } from "./describe-with-redis.js";
export { type EventuallyOptions, eventually } from "./eventually.js";
export { jainIndex } from "./jain-index.js";
export {
  hasRedisServer,
  REDIS_INSTALL_HINT,
  type RedisTestServer,
  redisSuiteMode,
  type StartRedisOptions,
  startRedis,
} from "./redis-server.js";
export { type LogCall, type SpyLogger, type SpyLoggerOptions, spyLogger } from "./spy-logger.js";
export { type UnhandledRejectionsOptions, unhandledRejectionsOf } from "./unhandled-rejections.js";
export {
  type RunUsageExampleOptions,
  runUsageExample,
  type UsageExampleRun,
} from "./usage-example.js";

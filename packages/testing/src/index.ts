export {
  BotApiCallError,
  botApiGetUpdates,
  type GetUpdatesCall,
} from "./bot-api-get-updates.js";
export { type ChannelRecorder, recordChannels } from "./channel-recorder.js";
export { type ChildProcesses, childProcesses, isRunning } from "./child-processes.js";
export {
  CHROMIUM_ARGS,
  CHROMIUM_INSTALL_HINT,
  type ChromiumLaunch,
  chromiumPath,
  describeWithChromium,
  hasChromium,
} from "./chromium.js";
export { isCi } from "./ci.js";
export { describeWithRedis } from "./describe-with-redis.js";
export { type InstanceofMismatch, instanceofAcrossCopies } from "./error-copies.js";
export { type EventuallyOptions, eventually } from "./eventually.js";
export { scaledThrottler } from "./grammy-throttler.js";
export { jainIndex } from "./jain-index.js";
export {
  type ContractJournal,
  contractUpdate,
  describeJournalContract,
  type JournalContractTarget,
} from "./journal-contract.js";
export { runtimeDependenciesOf } from "./package-manifest.js";
export {
  type CrowdSim,
  type CrowdUpdate,
  type PrivateCrowd,
  privateCrowd,
} from "./private-crowd.js";
export {
  hasRedisServer,
  REDIS_INSTALL_HINT,
  type RedisTestServer,
  redisSuiteMode,
  type StartRedisOptions,
  startRedis,
} from "./redis-server.js";
export { ScaledClock } from "./scaled-clock.js";
export { type LogCall, type SpyLogger, type SpyLoggerOptions, spyLogger } from "./spy-logger.js";
export { type UnhandledRejectionsOptions, unhandledRejectionsOf } from "./unhandled-rejections.js";
export {
  type RunUsageExampleOptions,
  runUsageExample,
  type UsageExampleRun,
} from "./usage-example.js";
export {
  serveWebhook,
  WEBHOOK_FRAMEWORKS,
  type WebhookAdapters,
  type WebhookFramework,
  type WebhookServer,
} from "./webhook-servers.js";

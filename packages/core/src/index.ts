export { abortReason, onAbort } from "./abort.js";
export { BinaryHeap, type Comparator } from "./binary-heap.js";
export {
  type Clock,
  checkDelay,
  type SleepOptions,
  sleepWith,
  systemClock,
  type Timer,
} from "./clock.js";
export { createDeferred, type Deferred } from "./deferred.js";
export { channelNames, createChannels, createPublisher, type Publish } from "./diagnostics.js";
export { brandErrors } from "./error-brand.js";
export { CoreError, type CoreErrorCode } from "./errors.js";
export {
  checkLogger,
  type Logger,
  type LogLevel,
  type LogMethod,
  safeLog,
  silentLogger,
} from "./logger.js";
export { ManualClock } from "./manual-clock.js";
export { type AcquireOptions, Semaphore, type SemaphorePermit } from "./semaphore.js";
export {
  checkBoolean,
  checkClock,
  checkFunction,
  checkMethods,
  checkNumber,
  checkObject,
  checkOptionalNumber,
  checkOptions,
  checkSignal,
  closestName,
  describeValue,
  type NumberRule,
} from "./validate.js";

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
export { CoreError, type CoreErrorCode } from "./errors.js";
export { ManualClock } from "./manual-clock.js";
export { type AcquireOptions, Semaphore, type SemaphorePermit } from "./semaphore.js";
export { checkNumber, type NumberRule } from "./validate.js";

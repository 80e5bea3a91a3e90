// The outbox's write vocabulary and streams, as a grammY user names them.
export {
  type MessageStream,
  type MethodClass,
  type MethodName,
  methodClasses,
  type StreamMessageOptions,
  type StreamOutcome,
  type StreamRegistry,
  type StreamSource,
} from "@telepace/outbox";
export type { BotIntakeOptions } from "./bot-intake.js";
export { type ReplacingProgress, replacing } from "./progress-marker.js";
export {
  type GrammySignal,
  replaceProgress,
  type SendMessageOther,
} from "./replace-progress.js";
export { type RunnerHandle, type RunOptions, run } from "./runner.js";
export type { StreamFlavor } from "./streaming.js";
export { type TelepaceOptions, type TelepaceTransformer, telepace } from "./transformer.js";
export {
  type WebhookCallback,
  type WebhookCallbackOptions,
  webhookCallback,
} from "./webhook-callback.js";

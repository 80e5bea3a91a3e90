export type {
  MessageStream,
  StreamMessageOptions,
  StreamOutcome,
  StreamRegistry,
  StreamSource,
} from "@telepace/outbox";
export type { BotIntakeOptions } from "./bot-intake.js";
export { type MethodClass, type MethodName, methodClasses } from "./method-classes.js";
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

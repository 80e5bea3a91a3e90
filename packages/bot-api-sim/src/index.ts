// @telepace/bot-api-sim: a Telegram Bot API server on loopback that behaves like Telegram's, with a
// control API to play users and read what the bot did.

export {
  BotApiSim,
  type CloseOptions,
  type RestartUpdateIdsOptions,
  type SimBotInfo,
  type SimBotSnapshot,
  type SimSnapshot,
  type WaitForMessageOptions,
} from "./control/bot-api-sim.js";
export {
  type AddBotOptions,
  type ByOption,
  type CreateGroupOptions,
  type CreatePrivateOptions,
  type RemoveOptions,
  SimChats,
} from "./control/sim-chats.js";
export { type BotOption, type CreateUserOptions, SimUsers } from "./control/sim-users.js";
export type { SendMediaOptions, SendTextOptions, UserFile } from "./control/user-actions.js";
export {
  type BotApiSimEvent,
  botApiSimChannels,
  type FaultMessage,
  type RateLimitedMessage,
  type RequestMessage,
  type UpdateMessage,
  type WebhookMessage,
} from "./diagnostics.js";
export { BotApiSimError, type BotApiSimErrorCode } from "./errors.js";
export { BOT_API_METHODS, type BotApiMethod } from "./methods/known-methods.js";
export { IMPLEMENTED_METHODS } from "./methods/method-table.js";
export {
  type BotApiSimOptions,
  type BotOptions,
  botApiSimDefaults,
  defaultRateLimits,
  type Logger,
  type RateLimitOptions,
} from "./options.js";
export { start } from "./start.js";
export {
  type ArmedFault,
  type ArmedFaults,
  type DisruptOptions,
  type ErrorRateOptions,
  type FailOptions,
  FaultInjector,
  type LatencyOptions,
} from "./wire/faults.js";
export { BOT_TOKEN_SHAPE, isBotToken } from "./wire/token.js";
export type { CallbackAnswer } from "./world/bot-record.js";
export type { MemberStatus } from "./world/chat-record.js";
export type { SimCounters } from "./world/counters.js";
export type { DraftChange, MessageDraft } from "./world/message-draft.js";
export type { BucketBudget, SendBudget, WindowBudget } from "./world/rate-limiter.js";
export type { ShownReplyKeyboard } from "./world/reply-keyboards.js";
export type { BotRef, ChatRef, UserRef, WaitOptions } from "./world/sim-world.js";
export type { Transcript, TranscriptEvent, TranscriptEventKind } from "./world/transcript.js";

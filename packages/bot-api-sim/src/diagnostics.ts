// node:diagnostics_channel channels of the simulator, named telepace:bot-api-sim:<event>. Events
// are built only when someone listens, are frozen, and never carry a token.

import { channelNames, createPublisher } from "@telepace/core";

/** A Bot API call was answered. */
export interface RequestMessage {
  readonly type: "request";
  readonly botId: number;
  readonly method: string;
  readonly status: number;
  readonly durationMs: number;
}

/** A flood limit answered 429. */
export interface RateLimitedMessage {
  readonly type: "rate-limited";
  readonly botId: number;
  readonly chatId: number;
  readonly method: string;
  readonly retryAfter: number;
  readonly scope: "chat" | "group" | "global" | "draft";
}

/** An update was queued for a bot. */
export interface UpdateMessage {
  readonly type: "update";
  readonly botId: number;
  readonly updateId: number;
  /** The update's kind: `message`, `callback_query`, `stopped_message_generation`… */
  readonly updateType: string;
}

/** One POST of an update to a webhook ended. */
export interface WebhookMessage {
  readonly type: "webhook";
  readonly botId: number;
  readonly updateId: number;
  /** `confirmed` (a 2xx), `failed` (retried later) or `dropped` (it would expire before a retry). */
  readonly outcome: "confirmed" | "failed" | "dropped";
  /** The webhook's HTTP status, 0 when no answer came (refused, reset, timed out). */
  readonly status: number;
  readonly durationMs: number;
  /** How often this update had failed before. */
  readonly failures: number;
}

/** A fault was injected into a call. */
export interface FaultMessage {
  readonly type: "fault";
  readonly method: string;
  readonly fault: "fail" | "reset" | "malformed" | "random-error";
}

/** Every event the simulator publishes, by its `type`. */
export type BotApiSimEvent =
  | RequestMessage
  | RateLimitedMessage
  | UpdateMessage
  | WebhookMessage
  | FaultMessage;

/** Channel names by event type, for `diagnostics_channel.subscribe(name, fn)`. */
export const botApiSimChannels = channelNames("bot-api-sim", [
  "request",
  "rate-limited",
  "update",
  "webhook",
  "fault",
] as const);

/** Publishes one event when its channel has subscribers. */
export const publish = createPublisher<BotApiSimEvent>(botApiSimChannels);

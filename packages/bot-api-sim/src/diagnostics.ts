// node:diagnostics_channel channels of the simulator, named telepace:bot-api-sim:<event>. Messages
// never carry a token.

import { channel } from "node:diagnostics_channel";

/** A Bot API call was answered. */
export interface RequestMessage {
  readonly botId: number;
  readonly method: string;
  readonly status: number;
  readonly durationMs: number;
}

/** A flood limit answered 429. */
export interface RateLimitedMessage {
  readonly botId: number;
  readonly chatId: number;
  readonly method: string;
  readonly retryAfter: number;
  readonly scope: "chat" | "group" | "global";
}

/** An update was queued for a bot. */
export interface UpdateMessage {
  readonly botId: number;
  readonly updateId: number;
  readonly type: string;
}

/** A fault was injected into a call. */
export interface FaultMessage {
  readonly method: string;
  readonly fault: "fail" | "reset" | "malformed" | "random-error";
}

/** Channel names, for `diagnostics_channel.subscribe(name, fn)`. */
export const botApiSimChannels = Object.freeze({
  request: "telepace:bot-api-sim:request",
  rateLimited: "telepace:bot-api-sim:rate-limited",
  update: "telepace:bot-api-sim:update",
  fault: "telepace:bot-api-sim:fault",
});

const requestChannel = channel(botApiSimChannels.request);
const rateLimitedChannel = channel(botApiSimChannels.rateLimited);
const updateChannel = channel(botApiSimChannels.update);
const faultChannel = channel(botApiSimChannels.fault);

/** Publishes an answered call when someone listens. */
export function publishRequest(message: RequestMessage): void {
  if (requestChannel.hasSubscribers) requestChannel.publish(message);
}

/** Publishes a flood-limit 429 when someone listens. */
export function publishRateLimited(message: RateLimitedMessage): void {
  if (rateLimitedChannel.hasSubscribers) rateLimitedChannel.publish(message);
}

/** Publishes a queued update when someone listens. */
export function publishUpdate(message: UpdateMessage): void {
  if (updateChannel.hasSubscribers) updateChannel.publish(message);
}

/** Publishes an injected fault when someone listens. */
export function publishFault(message: FaultMessage): void {
  if (faultChannel.hasSubscribers) faultChannel.publish(message);
}

// Getting updates: getUpdates (offsets, clamping, true long polling, 409s) and the webhook
// methods, which set, report and stop the bot's webhook delivery.

import type { Update, WebhookInfo } from "@grammyjs/types";
import { tooManyRequests } from "../wire/api-failure.js";
import type { RequestParams } from "../wire/request-params.js";
import { CONFLICT_SET_WEBHOOK } from "../world/long-poll.js";
import type { UpdateType } from "../world/update-queue.js";
import { checkSecretToken, checkWebhookUrl, type WebhookUrl } from "../world/webhook-url.js";
import { ApiSuccess, type MethodContext } from "./bot-messages.js";

/** Longest long poll the real server allows, in seconds. */
const MAX_LONG_POLL_SECONDS = 50;

const WEBHOOK_ACTIVE =
  "can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first";

const UPDATE_TYPES = new Set<string>([
  "message",
  "edited_message",
  "channel_post",
  "edited_channel_post",
  "business_connection",
  "business_message",
  "edited_business_message",
  "deleted_business_messages",
  "guest_message",
  "stopped_message_generation",
  "message_reaction",
  "message_reaction_count",
  "inline_query",
  "chosen_inline_result",
  "callback_query",
  "shipping_query",
  "pre_checkout_query",
  "purchased_paid_media",
  "poll",
  "poll_answer",
  "my_chat_member",
  "chat_member",
  "chat_join_request",
  "chat_boost",
  "removed_chat_boost",
  "managed_bot",
  "subscription",
] satisfies UpdateType[]);

/**
 * `allowed_updates` as the real server reads it: a JSON array of type names; unknown names are
 * ignored, so a list of only unknown names means the default. Malformed JSON is ignored.
 */
function allowedUpdates(params: RequestParams): string[] | undefined {
  const parsed = params.json("allowed_updates");
  if (parsed === undefined || "error" in parsed || !Array.isArray(parsed.value)) return undefined;
  return parsed.value.filter(
    (item): item is string => typeof item === "string" && UPDATE_TYPES.has(item),
  );
}

/** getUpdates */
export async function getUpdates(ctx: MethodContext): Promise<Update[]> {
  const { bot, params, world } = ctx;
  if (bot.webhook !== undefined) return bot.longPoll.failConflict(WEBHOOK_ACTIVE, ctx.signal);
  const offset = params.int("offset", 0);
  let limit = params.int("limit", 100, 1, 100);
  let timeout = params.int("timeout", 0, 0, MAX_LONG_POLL_SECONDS);
  bot.queue.setAllowedUpdates(allowedUpdates(params));
  const now = world.now();
  const previous = bot.lastGetUpdates;
  // The real server's guard against busy loops on the same offset.
  if (previous !== undefined && previous.offset === offset) {
    if (timeout < 3 && now < previous.atMs + 3000) timeout = 3;
    if (now < previous.atMs + 500) limit = 1;
  }
  bot.lastGetUpdates = { offset, atMs: now };
  let updates = bot.queue.take(offset, limit, now);
  if (updates.length === 0 && timeout > 0) {
    updates = await bot.longPoll.park(offset, limit, timeout * 1000, ctx.signal);
  }
  world.counters.add("updatesDelivered", updates.length);
  return updates;
}

/** setWebhook and deleteWebhook (the latter is setWebhook with an empty URL). */
export function setWebhook(ctx: MethodContext): ApiSuccess {
  const { bot, params, world } = ctx;
  const url = ctx.method === "setWebhook" ? params.text("url").trim() : "";
  const now = world.now();
  if (url.length > 0) {
    if (now < bot.nextSetWebhookAtMs) {
      throw tooManyRequests(1 / world.options.timeScale);
    }
    bot.nextSetWebhookAtMs = now + 1000 / world.options.timeScale;
  }
  const maxConnections = url.length > 0 ? params.int("max_connections", 40, 1, 100) : 0;
  const ipAddress = url.length > 0 ? params.get("ip_address") : undefined;
  let checked: WebhookUrl | undefined;
  let secretToken: string | undefined;
  if (url.length > 0) {
    checked = checkWebhookUrl(url, ipAddress);
    secretToken = checkSecretToken(params.get("secret_token"));
  }
  const dropPending = params.bool("drop_pending_updates");
  const current = bot.webhook;
  const unchanged =
    (current?.url ?? "") === url &&
    (current?.maxConnections ?? 0) === maxConnections &&
    current?.ipAddress === ipAddress &&
    current?.secretToken === secretToken &&
    !dropPending;
  bot.queue.setAllowedUpdates(allowedUpdates(params));
  if (unchanged) {
    return new ApiSuccess(
      true,
      url.length > 0 ? "Webhook is already set" : "Webhook is already deleted",
    );
  }
  if (url.length > 0) bot.longPoll.abort(CONFLICT_SET_WEBHOOK);
  if (dropPending) bot.queue.clear();
  bot.webhookDelivery.stop();
  bot.webhook = checked === undefined ? undefined : { url, maxConnections, ipAddress, secretToken };
  if (checked !== undefined) {
    // Only loopback receivers get updates; elsewhere the webhook is state, as before.
    if (checked.address !== undefined) {
      bot.webhookDelivery.start({
        url: checked.url,
        address: checked.address,
        maxConnections,
        secretToken,
      });
    }
    return new ApiSuccess(true, "Webhook was set");
  }
  return new ApiSuccess(
    true,
    current === undefined ? "Webhook is already deleted" : "Webhook was deleted",
  );
}

/** getWebhookInfo */
export function getWebhookInfo(ctx: MethodContext): WebhookInfo {
  const { bot, world } = ctx;
  const info: WebhookInfo = {
    url: bot.webhook?.url ?? "",
    has_custom_certificate: false,
    pending_update_count: bot.queue.pending(world.now()),
  };
  const delivery = bot.webhookDelivery;
  if (delivery.lastError !== undefined) {
    info.last_error_date = delivery.lastError.date;
    info.last_error_message = delivery.lastError.message;
  }
  if (bot.webhook !== undefined) {
    info.max_connections = bot.webhook.maxConnections;
    const ipAddress = bot.webhook.ipAddress ?? delivery.ipAddress;
    if (ipAddress !== undefined) info.ip_address = ipAddress;
    const allowed = bot.queue.allowedUpdates;
    if (allowed !== undefined) {
      info.allowed_updates = [...allowed] as NonNullable<WebhookInfo["allowed_updates"]>;
    }
  }
  return info;
}

// A webhook reply: a 2xx answer whose body names a Bot API method runs that method for the bot,
// as Telegram documents ("Making requests when getting updates"); its result goes nowhere.

import type { MethodContext } from "../methods/bot-messages.js";
import { canonicalMethod } from "../methods/known-methods.js";
import { METHOD_HANDLERS } from "../methods/method-table.js";
import { ApiFailure } from "../wire/api-failure.js";
import { parseRequestParams } from "../wire/request-body.js";
import type { RequestParams } from "../wire/request-params.js";
import { redactTokens } from "../wire/token.js";
import type { BotRecord } from "../world/bot-record.js";
import type { SimWorld } from "../world/sim-world.js";
import type { WebhookResponse } from "../world/webhook-delivery.js";

/** Methods the real server never runs from a webhook answer. */
const REFUSED = new Set(["setwebhook", "deletewebhook", "close", "logout"]);

function paramsOf(response: WebhookResponse): RequestParams | undefined {
  if (response.body === undefined) return undefined;
  try {
    return parseRequestParams("", response.contentType, response.body);
  } catch {
    return undefined; // a body that is no request is just a body
  }
}

/** Runs the method named in a webhook's 2xx answer, if any; failures are not reported anywhere. */
export function runWebhookReply(world: SimWorld, bot: BotRecord, response: WebhookResponse): void {
  const params = paramsOf(response);
  const name = params?.get("method")?.toLowerCase();
  if (params === undefined || name === undefined || world.isClosed) return;
  if (name.startsWith("get") || REFUSED.has(name)) return;
  const method = canonicalMethod(name);
  world.counters.call(method ?? "<unknown>");
  world.counters.add("webhookReplies");
  const handler = method === undefined ? undefined : METHOD_HANDLERS.get(method);
  if (method === undefined || handler === undefined) return;
  // Nobody waits for the result, so nothing can abort it.
  const ctx: MethodContext = { world, bot, params, method, signal: new AbortController().signal };
  Promise.resolve()
    .then(() => handler(ctx))
    .catch((error: unknown) => {
      if (error instanceof ApiFailure) return;
      const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      world.log(
        "error",
        { method, error: redactTokens(text, [bot.token]) },
        "bot-api-sim: a webhook reply failed inside the simulator",
      );
    });
}

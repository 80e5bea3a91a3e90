// webhookCallback(bot): a grammY bot on webhooks through telepace's intake. The webhook handler
// of @telepace/update-dispatch stores each update before Telegram gets its 200, and
// `bot.handleUpdate` runs it afterwards in per-principal order, with bounded memory.

import { checkOptions } from "@telepace/core";
import {
  type IntakeCloseResult,
  type UpdateIntake,
  type WebhookHandler,
  type WebhookHandlerOptions,
  webhookHandler,
  webhookHandlerOptionNames,
} from "@telepace/update-dispatch";
import type { Bot, Context } from "grammy";
import { BOT_INTAKE_OPTION_NAMES, type BotIntakeOptions, botIntake } from "./bot-intake.js";
import { checkPeerOptions } from "./peer-options.js";

/**
 * Options of {@link webhookCallback}: the intake's (`journal`, `dispatcher`, `maxUnfinished`,
 * `stopTimeoutMs`, `clock`, `logger`) and the webhook handler's (`secretToken`,
 * `maxBodyBytes`, `retryAfterSeconds`, `timeoutMs`), checked whole.
 */
export interface WebhookCallbackOptions
  extends BotIntakeOptions,
    Omit<WebhookHandlerOptions, "clock" | "logger"> {}

/**
 * A grammY bot's webhook: every adapter of `@telepace/update-dispatch`'s `WebhookHandler`
 * (`node`, `fetch`, `express`, `fastify`, `handle`, `snapshot`), plus the intake and a stop.
 */
export interface WebhookCallback extends WebhookHandler, AsyncDisposable {
  /** The intake underneath: its `journal`, `snapshot()`. */
  readonly intake: UpdateIntake;
  /**
   * Stops taking updates (requests get 503, so Telegram keeps them), lets running and stored
   * updates finish within `stopTimeoutMs`, and resolves once they have:
   * `{ status: "drained" | "timed-out", unfinished }`. Calling it again returns the same promise.
   */
  stop(): Promise<IntakeCloseResult>;
}

const OPTION_NAMES = [...BOT_INTAKE_OPTION_NAMES, ...webhookHandlerOptionNames];

// grammY's webhookCallback options, and what does that here.
const PEER_OPTIONS: Readonly<Record<string, string>> = Object.freeze({
  onTimeout:
    "`dispatcher.timeoutMs` to bound a handler; Telegram is answered once the update is stored, not when the middleware is done",
  timeoutMilliseconds:
    "`timeoutMs` (how long to wait for the journal) and `dispatcher.timeoutMs` (for a handler)",
});

// grammY's adapter names, and the adapter that serves each here.
const ADAPTERS: Readonly<Record<string, string>> = Object.freeze({
  express: "express",
  fastify: "fastify",
  http: "node",
  https: "node",
  hono: "fetch` (`(c) => webhook.fetch(c.req.raw)`)",
  "std/http": "fetch",
  serveHttp: "fetch",
  bun: "fetch",
  "cloudflare-mod": "fetch",
});

/**
 * Serves `bot` on Telegram's webhook through an `UpdateIntake`: each update is stored in the
 * journal before Telegram is answered 200, then `bot.handleUpdate` runs it in per-principal
 * order (one person in one chat), different principals in parallel, under the dispatcher's
 * bounds; middleware errors go to `bot.catch`. `bot.init()` runs before the first update is
 * taken (a failure answers 500, and Telegram sends the update again).
 *
 * @throws {TypeError | RangeError} naming the option, when an option is unknown or invalid (also
 *   for grammY's adapter name as the second argument, naming the adapter to use instead).
 *
 * @example
 * const webhook = webhookCallback(bot, { secretToken: process.env.WEBHOOK_SECRET });
 * app.post("/telegram", webhook.express);
 * process.once("SIGTERM", () => void webhook.stop());
 */
export function webhookCallback<C extends Context>(
  bot: Bot<C>,
  options?: WebhookCallbackOptions,
): WebhookCallback {
  if (typeof options === "string") {
    const adapter = ADAPTERS[options] ?? "handle";
    throw new TypeError(
      `webhookCallback(bot, ${JSON.stringify(options)}) is grammY's form: here every adapter is on the result, use \`webhookCallback(bot, options).${adapter}\``,
    );
  }
  checkPeerOptions(options, PEER_OPTIONS);
  const given = checkOptions("options", options, OPTION_NAMES) as WebhookCallbackOptions;
  const intake = botIntake(bot, given);
  let initializing: Promise<void> | undefined;
  const initialized = (): Promise<void> => {
    initializing ??= bot.init().catch((error: unknown) => {
      initializing = undefined; // the next request tries again
      throw error;
    });
    return initializing;
  };
  const handler = webhookHandler(
    {
      accept: async (update, acceptOptions) => {
        await initialized();
        return intake.accept(update, acceptOptions);
      },
    },
    {
      secretToken: given.secretToken,
      maxBodyBytes: given.maxBodyBytes,
      retryAfterSeconds: given.retryAfterSeconds,
      timeoutMs: given.timeoutMs,
      clock: given.clock,
      logger: given.logger,
    },
  );
  let stopped: Promise<IntakeCloseResult> | undefined;
  const stop = (): Promise<IntakeCloseResult> => {
    stopped ??= intake.close();
    return stopped;
  };
  return Object.freeze({
    ...handler,
    intake,
    stop,
    [Symbol.asyncDispose]: async () => {
      await stop();
    },
  });
}

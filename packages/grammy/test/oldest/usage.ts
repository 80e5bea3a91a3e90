// A bot as this package's README writes one, compiled against the oldest grammY the peer range
// claims and the package as published (its built types): streaming, the runner, a webhook.

import { replacing, run, type StreamFlavor, telepace, webhookCallback } from "@telepace/grammy";
import { Bot, type Context } from "grammy";

declare const model: {
  tokens(prompt: string, options: { signal: AbortSignal }): AsyncIterable<string>;
};

const bot = new Bot<Context & StreamFlavor>("1:token");
const pace = telepace({ maybeDelivered: "resend" });
bot.api.config.use(pace);
bot.use(pace.middleware());

bot.on("message:text", async (ctx) => {
  const progress = await ctx.reply("Working…");
  const messages = await ctx.replyWithStream(
    (signal) => model.tokens(ctx.message.text, { signal }),
    { canStop: true, params: { reply_parameters: { message_id: ctx.message.message_id } } },
  );
  const outcome = await ctx.replyWithStream(["a", { text: "b" }]).result;
  await ctx.reply(`${messages.length} ${outcome.status}`, replacing(progress.message_id));
});

export const runner = run(bot, { dispatcher: { maxActivePrincipals: 64 } });
export const webhook = webhookCallback(bot, { secretToken: "secret" });

// A complete bot on @telepace/grammy: `TELEGRAM_BOT_TOKEN=… npx tsx bot.ts`
// (TELEGRAM_API_ROOT for a local Bot API server or @telepace/bot-api-sim).
import { replacing, run, telepace } from "@telepace/grammy";
import { Bot } from "grammy";

const token = process.env.TELEGRAM_BOT_TOKEN;
if (token === undefined) throw new Error("Set TELEGRAM_BOT_TOKEN to the token from @BotFather");
const apiRoot = process.env.TELEGRAM_API_ROOT ?? "https://api.telegram.org";
const bot = new Bot(token, { client: { apiRoot } });

// Writes: paced per chat, edits coalesced, 429s and 5xx handled. Replaces throttler + auto-retry.
const pace = telepace();
bot.api.config.use(pace);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

bot.command("start", (ctx) => ctx.reply("Send /work to watch a job report its progress."));

bot.command("work", async (ctx) => {
  const progress = await ctx.reply("Working… 0%");
  for (let percent = 5; percent <= 100; percent += 5) {
    await sleep(100);
    // An edit per state, not awaited: a newer one replaces an edit still waiting for its slot.
    ctx.api
      .editMessageText(ctx.chat.id, progress.message_id, `Working… ${percent}%`)
      .catch((error) => console.error("progress edit failed", error));
  }
  // The final goes out first; the progress message is deleted once the final has arrived.
  await ctx.reply("Done.", replacing(progress.message_id));
});

bot.on("message:text", (ctx) => ctx.reply(`You said: ${ctx.message.text}`));

bot.catch((error) => console.error("update", error.ctx.update.update_id, "failed:", error.error));

// Reads: each batch is stored before it is confirmed; one person's updates run in order.
const runner = run(bot);

const stop = async () => {
  await runner.stop(); // let running handlers finish (10 s at most)
  await pace.close(); // send what they left in the outbox
};
process.once("SIGINT", () => void stop());
process.once("SIGTERM", () => void stop());

await runner.task();

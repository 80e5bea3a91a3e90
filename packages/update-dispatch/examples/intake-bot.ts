// A bot on UpdateIntake: each getUpdates batch is stored in a journal and confirmed at once, then
// processed — one person's updates in order, different people in parallel, memory bounded. The
// transport here is @telepace/client; the journal is in memory (a crash loses what it holds).
// Run: TELEGRAM_BOT_TOKEN=… node intake-bot.js, then write to the bot; Ctrl-C stops it.
import { TelegramClient } from "@telepace/client";
import { UpdateIntake } from "@telepace/update-dispatch";

const token = process.env.TELEGRAM_BOT_TOKEN;
if (token === undefined) throw new Error("Set TELEGRAM_BOT_TOKEN to the token from @BotFather");
const client = new TelegramClient({ token, apiRoot: process.env.TELEGRAM_API_ROOT });

const intake = new UpdateIntake(
  async (update, signal) => {
    const text = update.message?.text;
    if (update.message === undefined || text === undefined) return;
    // Pass the signal on: it aborts at the dispatcher's timeout and when shutdown runs out.
    await client.sendMessage(update.message.chat.id, `You said: ${text}`, {}, { signal });
  },
  {
    // Any transport: telepace's TelegramClient, grammY's bot.api, your own fetch.
    getUpdates: (params, options) => client.getUpdates(params, options),
    dispatcher: { timeoutMs: 30_000 }, // bounds and timeout of the dispatcher it builds
  },
);

const shutdown = new AbortController();
process.once("SIGINT", () => shutdown.abort());
process.once("SIGTERM", () => shutdown.abort());
try {
  // Fetch → store → confirm → dispatch, until the signal aborts; replays what a previous run left
  // unfinished first. Rejects with PollingStoppedError on 409 (another poller or a webhook) and
  // 401/404 (a bad token); 429s and network errors are waited out.
  await intake.run({ signal: shutdown.signal });
} finally {
  // Let running updates finish for up to 10 s; the rest stays unfinished in the journal.
  await intake.close({ timeoutMs: 10_000 });
  await client.close();
}

// A complete bot on @telepace/client: it answers each text with a progress message, edits it
// (the outbox sends only the newest edit) and replaces it with the final answer.
// Run: TELEGRAM_BOT_TOKEN=… node progress-bot.js, then write to the bot; Ctrl-C stops it.
import { TelegramClient } from "@telepace/client";

const token = process.env.TELEGRAM_BOT_TOKEN;
if (token === undefined) throw new Error("Set TELEGRAM_BOT_TOKEN to the token from @BotFather");
// TELEGRAM_API_ROOT: a local Bot API server or @telepace/bot-api-sim; unset, the cloud API.
const client = new TelegramClient({ token, apiRoot: process.env.TELEGRAM_API_ROOT });

async function answer(chatId: number, text: string): Promise<void> {
  // Writes resolve with a typed outcome and never reject (except when you abort them).
  const progress = await client.sendMessage(chatId, "Working… 0%");
  if (progress.status !== "delivered") return;
  const progressId = progress.result.message_id;
  for (const percent of [25, 50, 75]) {
    // Fire and forget: pending edits of one message coalesce to the latest text.
    void client.editMessageText(chatId, progressId, `Working… ${percent}%`);
  }
  // Sent first; the progress message is deleted only once this one was delivered.
  const final = await client.sendMessage(
    chatId,
    `Done: ${text}`,
    {},
    { replaceMessageId: progressId },
  );
  if (final.status === "failed" && final.maybeDelivered) {
    console.error(
      "The final answer may not have arrived; it was not resent, to avoid a duplicate.",
    );
  }
}

const stopping = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => stopping.abort());
let offset = 0;
try {
  for (;;) {
    // Long polling bypasses the outbox; a 429 is slept out. The signal ends the wait.
    const updates = await client.getUpdates({ offset, timeout: 30 }, { signal: stopping.signal });
    for (const update of updates) {
      offset = update.update_id + 1;
      const message = update.message;
      if (message?.text !== undefined) await answer(message.chat.id, message.text);
    }
  }
} catch (error) {
  if (!stopping.signal.aborted) throw error;
} finally {
  console.log(client.outbox.snapshot().counters); // requests, coalesced edits, 429s, …
  await client.close(); // the outbox drains (10 s at most), then the connections close
}

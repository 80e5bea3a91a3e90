// The plain case: a TelegramOutbox in front of your own Bot API calls. Each op's `execute` makes
// one attempt; the outbox decides when it runs (paced per chat), keeps only the newest of the ops
// that share a key, and retries 429s and transient failures.
// Run: TELEGRAM_BOT_TOKEN=… TELEGRAM_CHAT_ID=… node send-and-edit.js (the chat: one that wrote to
// the bot, e.g. your own user id; TELEGRAM_API_ROOT for a local Bot API server or the telepace sim)
import { Priority, TelegramOutbox } from "@telepace/outbox";

const token = process.env.TELEGRAM_BOT_TOKEN;
const chatId = Number(process.env.TELEGRAM_CHAT_ID);
if (token === undefined || !Number.isSafeInteger(chatId)) {
  throw new Error("Set TELEGRAM_BOT_TOKEN and TELEGRAM_CHAT_ID");
}
const apiRoot = process.env.TELEGRAM_API_ROOT ?? "https://api.telegram.org";

/** One attempt of a Bot API method. A failed envelope is thrown as it came: the outbox reads it. */
async function callBotApi<T>(method: string, params: object, signal: AbortSignal): Promise<T> {
  const response = await fetch(`${apiRoot}/bot${token}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(params),
    signal,
  });
  const envelope = (await response.json()) as { ok: boolean; result: T };
  if (!envelope.ok) throw envelope; // { error_code, description, parameters: { retry_after } }
  return envelope.result;
}

const outbox = new TelegramOutbox(); // 1/s per private chat, 20/min per group, 30/s in all

const sent = await outbox.enqueue({
  chatId,
  execute: (signal) =>
    callBotApi<{ message_id: number }>("sendMessage", { chat_id: chatId, text: "0%" }, signal),
});
// An outcome, never a rejection: delivered (`notModified` is for edits), failed (with its error),
// superseded, closed or rejected.
if (sent.status !== "delivered" || sent.notModified) throw new Error(`Not sent: ${sent.status}`);
const messageId = sent.result.message_id;

// Four edits of one message under one key: each replaces the one still waiting for its slot.
const edits = [25, 50, 75, 100].map((percent) =>
  outbox.enqueue({
    chatId,
    key: `edit:${messageId}`,
    priority: Priority.edit, // sends go first
    idempotent: true, // safe to repeat after a lost connection
    execute: (signal) =>
      callBotApi(
        "editMessageText",
        { chat_id: chatId, message_id: messageId, text: `${percent}%` },
        signal,
      ),
  }),
);
for (const outcome of await Promise.all(edits)) console.log(outcome.status);
await outbox.close(); // sends what is still queued (10 s at most), then refuses new ops

// One message to a list of people, as a job whose progress is on disk: run it, kill it with
// `kill -9` half-way, run it again — it goes on where the journal says, and nobody it reached is
// sent the message again (only sends cut off in flight may repeat; the report counts them).
// Run: TELEGRAM_BOT_TOKEN=… TELEGRAM_CHAT_ID=<id>,<id>,… node winter-sale.js
import { BroadcastRegistry, JournalBroadcastStore } from "@telepace/broadcast";
import { TelegramClient } from "@telepace/client";
import { FileUpdateJournal } from "@telepace/journal-file";

const token = process.env.TELEGRAM_BOT_TOKEN;
if (token === undefined) throw new Error("Set TELEGRAM_BOT_TOKEN to the token from @BotFather");
// Who to reach, in a stable order: chat ids of people who started the bot (for ids in a
// database, give a cursor instead: see Recipients).
const userIds = (process.env.TELEGRAM_CHAT_ID ?? "").split(",").filter(Boolean).map(Number);

// The bot's journal keeps the broadcast's progress: each send is synced as started before its
// request goes out, and its outcome after.
const journal = await FileUpdateJournal.open(process.env.JOURNAL_DIR ?? "./data");
const client = new TelegramClient({ token, apiRoot: process.env.TELEGRAM_API_ROOT });
const broadcasts = new BroadcastRegistry({
  client, // its outbox paces the broadcast together with the bot's replies
  store: new JournalBroadcastStore(journal),
});

const job = broadcasts.start("winter-sale", {
  message: {
    method: "sendMessage",
    params: {
      text: "Winter sale: 30% off everything until Sunday.",
      reply_markup: { inline_keyboard: [[{ text: "Shop", url: "https://example.com/sale" }]] },
    },
  },
  recipients: userIds,
});
const report = await job.result; // never rejects
console.log(report.status, JSON.stringify(report.counts));
await broadcasts.close();
await client.close();
await journal.close();

// "Store first, confirm after", written out by hand to show what the journal does (UpdateIntake
// of @telepace/update-dispatch runs this loop for you, with per-person order and bounds): append
// what getUpdates returned — on disk and synced — then confirm it with the next offset, then
// handle it; after a restart (even `kill -9`), handle what was stored but never finished.
// Run: TELEGRAM_BOT_TOKEN=… node store-first.js, then write to the bot; Ctrl-C stops it.
import type { Update } from "@grammyjs/types";
import { TelegramClient } from "@telepace/client";
import { FileUpdateJournal } from "@telepace/journal-file";

const token = process.env.TELEGRAM_BOT_TOKEN;
if (token === undefined) throw new Error("Set TELEGRAM_BOT_TOKEN to the token from @BotFather");
const client = new TelegramClient({ token, apiRoot: process.env.TELEGRAM_API_ROOT });
// One process per directory: a second one is refused while this one runs.
const journal = await FileUpdateJournal.open(process.env.JOURNAL_DIR ?? "./data/updates");

async function handle(update: Update): Promise<void> {
  try {
    const message = update.message;
    if (message?.text !== undefined)
      await client.sendMessage(message.chat.id, `Stored: ${message.text}`);
  } finally {
    await journal.finish(update.update_id); // succeeded or failed: it must not run again
  }
}

const stopping = new AbortController();
process.once("SIGINT", () => stopping.abort());
process.once("SIGTERM", () => stopping.abort());
try {
  // After a restart: what was stored but never finished, in arrival order.
  for (const update of await journal.unfinished()) await handle(update);
  let offset = ((await journal.highestUpdateId()) ?? -1) + 1;
  while (!stopping.signal.aborted) {
    // The offset confirms everything below it: only what the journal holds is ever confirmed.
    const updates = await client
      .getUpdates({ offset, timeout: 30 }, { signal: stopping.signal })
      .catch((error: unknown) => (stopping.signal.aborted ? [] : Promise.reject(error)));
    const { appended } = await journal.append(updates); // resolves once synced to disk
    offset = ((await journal.highestUpdateId()) ?? offset - 1) + 1;
    for (const update of appended) await handle(update); // a duplicate is never appended twice
  }
} finally {
  await journal.close();
  await client.close();
}

// A grammY bot against the simulator, as a test would drive it: a simulated user sends /start and
// the bot's reply is read back. Run: npx tsx grammy-bot.ts (prints "Welcome!")
import { start } from "@telepace/bot-api-sim";
import { Bot } from "grammy";

const sim = await start(); // 127.0.0.1, free port, one bot, Telegram's limits on
try {
  const bot = new Bot(sim.token, { client: { apiRoot: sim.apiRoot } });
  bot.command("start", (ctx) => ctx.reply("Welcome!"));
  void bot.start();

  const alice = sim.users.create({ firstName: "Alice" });
  const chat = sim.chats.createPrivate(alice);
  const hello = sim.sendCommand(alice, chat, "start");
  const reply = await sim.waitForMessage(chat, undefined, { afterMessageId: hello.message_id });
  console.log(reply.text); // Welcome!

  sim.transcript(chat); // messages as they now stand + every send/edit/delete/draft with its time
  sim.counters(); // calls per method, responses per status, 429s per chat, bytes in and out
  await bot.stop();
} finally {
  await sim.close();
}

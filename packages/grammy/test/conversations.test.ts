// Inside a real @grammyjs/conversations v2 conversation (the plugin installed through its
// `plugins` option): a stream is sent once although the conversation replays on every update,
// its source runs once, and the conversation's own calls go through the outbox, never twice.

import {
  type Conversation,
  type ConversationFlavor,
  conversations,
  createConversation,
} from "@grammyjs/conversations";
import type { Context } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import type { StreamFlavor } from "../src/index.js";
import { type StreamingBot, streamingBot } from "./support.js";

type Outer = ConversationFlavor<Context> & StreamFlavor;
type Inner = Context & StreamFlavor;

let f: StreamingBot<Outer> | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

async function setup(builder: (conversation: Conversation<Outer, Inner>, ctx: Inner) => unknown) {
  f = await streamingBot<Outer>();
  const { sim, bot, pace, deliver } = f;
  bot.use(conversations());
  bot.use(createConversation(builder, { id: "ask", plugins: [pace.middleware()] }));
  bot.command("ask", (ctx) => ctx.conversation.enter("ask"));
  const user = sim.users.create();
  const chat = sim.chats.createPrivate(user);
  const texts = () => sim.transcript(chat).messages.map((message) => message.text ?? "");
  return { sim, pace, user, chat, deliver, texts };
}

describe("inside @grammyjs/conversations", () => {
  it("a stream is sent once and its source runs once, though the conversation replays", async () => {
    let sourceRuns = 0;
    const outcomes: string[] = [];
    const { sim, user, chat, deliver, texts } = await setup(async (conversation, ctx) => {
      const messages = await ctx.replyWithStream(async function* () {
        sourceRuns++;
        yield "Hello ";
        yield "there";
      });
      outcomes.push(messages.map((message) => message.text).join("|"));
      const next = await conversation.wait();
      await next.reply(`got ${next.message?.text}`);
    });
    sim.sendCommand(user, chat, "ask");
    await deliver();
    sim.sendText(user, chat, "yes");
    await deliver(); // the conversation replays from the start, then gets "yes"
    expect(texts()).toEqual(["/ask", "Hello there", "yes", "got yes"]);
    expect(sourceRuns).toBe(1);
    // The replay got the recorded messages back, the same as the first run.
    expect(outcomes).toEqual(["Hello there", "Hello there"]);
    expect(sim.counters().calls.sendMessage).toBe(2);
  });

  it("the conversation's own calls go through the outbox, and a replay does not repeat them", async () => {
    const { sim, pace, user, chat, deliver, texts } = await setup(async (conversation, ctx) => {
      await ctx.reply("What is your name?");
      const { message } = await conversation.wait();
      await ctx.reply(`Welcome, ${message?.text}!`);
    });
    sim.sendCommand(user, chat, "ask");
    await deliver();
    sim.sendText(user, chat, "Dana");
    await deliver();
    expect(texts()).toEqual(["/ask", "What is your name?", "Dana", "Welcome, Dana!"]);
    expect(sim.counters().calls.sendMessage).toBe(2);
    // Both sends were paced by the outbox, each once: the replay was answered from its record.
    expect(pace.snapshot().counters).toMatchObject({ enqueued: 2, delivered: 2 });
  });
});

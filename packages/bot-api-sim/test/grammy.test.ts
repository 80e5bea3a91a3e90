// A real third-party framework against the simulator: grammY long-polls, replies, answers a
// button, edits, downloads a user's document and uploads one with InputFile — proof the simulator
// speaks the protocol a real framework expects. Also: grammY sees the flood limit's 429.

import { Bot, GrammyError, InputFile } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, start } from "../src/index.js";

let sim: BotApiSim;
let bot: Bot | undefined;

afterEach(async () => {
  if (bot?.isRunning()) await bot.stop();
  bot = undefined;
  await sim?.close();
});

describe("grammY", () => {
  it("runs a bot through long polling, replies, callback queries, edits and file transfers", async () => {
    sim = await start({ rateLimits: false });
    const running = new Bot(sim.token, { client: { apiRoot: sim.apiRoot } });
    bot = running;
    running.command("start", (ctx) =>
      ctx.reply("Welcome!", {
        reply_markup: { inline_keyboard: [[{ text: "Tap", callback_data: "tap" }]] },
      }),
    );
    running.callbackQuery("tap", async (ctx) => {
      await ctx.answerCallbackQuery({ text: "tapped" });
      await ctx.editMessageText("Tapped!");
    });
    running.on("message:document", async (ctx) => {
      const file = await ctx.getFile();
      const response = await fetch(`${sim.apiRoot}/file/bot${sim.token}/${file.file_path}`);
      const text = Buffer.from(await response.arrayBuffer()).toString();
      await ctx.replyWithDocument(new InputFile(Buffer.from(text.toUpperCase()), "shout.txt"), {
        caption: `${text.length} bytes`,
      });
    });
    running.on("message:text", (ctx) => ctx.reply(`echo: ${ctx.message.text}`));
    const errors: unknown[] = [];
    running.catch((error) => {
      errors.push(error.error);
    });
    const started = new Promise<void>((resolve) => {
      void running.start({ timeout: 10, onStart: () => resolve() });
    });
    await started;

    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);

    const hello = sim.sendCommand(alice, chat, "start");
    const welcome = await sim.waitForMessage(chat, undefined, { afterMessageId: hello.message_id });
    expect(welcome).toMatchObject({ text: "Welcome!", from: { id: sim.bot.id } });
    expect(welcome.reply_markup?.inline_keyboard[0]?.[0]).toMatchObject({ callback_data: "tap" });

    const press = sim.pressButton(alice, chat, welcome.message_id, "tap");
    expect(await sim.waitForCallbackAnswer(press.id)).toMatchObject({ text: "tapped" });
    const edit = await sim.waitForEvent(chat, (event) => event.kind === "edit");
    expect(edit).toMatchObject({
      messageId: welcome.message_id,
      text: "Tapped!",
      method: "editMessageText",
    });

    const said = sim.sendText(alice, chat, "hi there");
    expect(
      await sim.waitForMessage(chat, undefined, { afterMessageId: said.message_id }),
    ).toMatchObject({
      text: "echo: hi there",
    });

    const doc = sim.sendDocument(alice, chat, {
      bytes: Buffer.from("quiet words"),
      fileName: "in.txt",
    });
    const reply = await sim.waitForMessage(chat, (m) => "document" in m, {
      afterMessageId: doc.message_id,
    });
    expect(reply).toMatchObject({
      caption: "11 bytes",
      document: { file_name: "shout.txt", mime_type: "text/plain", file_size: 11 },
    });

    await running.stop();
    expect(errors).toEqual([]);
    const transcript = sim.transcript(chat);
    expect(
      transcript.messages.map((m) => ("text" in m ? m.text : "caption" in m ? m.caption : "")),
    ).toEqual(["/start", "Tapped!", "hi there", "echo: hi there", "", "11 bytes"]);
    expect(sim.counters().calls).toMatchObject({
      getUpdates: expect.any(Number),
      sendMessage: 2,
      editMessageText: 1,
      answerCallbackQuery: 1,
      getFile: 1,
      sendDocument: 1,
    });
  }, 30_000);

  it("hands grammY a 429 with retry_after when a peer bursts into one chat", async () => {
    sim = await start();
    const client = new Bot(sim.token, { client: { apiRoot: sim.apiRoot } });
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => client.api.sendMessage(chat.id, `burst ${i}`)),
    );
    const failures = results.filter((result) => result.status === "rejected");
    expect(failures.length).toBeGreaterThan(0);
    const error = (failures[0] as PromiseRejectedResult).reason as GrammyError;
    expect(error).toBeInstanceOf(GrammyError);
    expect(error.error_code).toBe(429);
    expect(error.parameters.retry_after).toBe(1);
    expect(sim.counters().tooManyRequests).toBe(failures.length);
  }, 30_000);

  it("streams drafts from grammY and hands it the user's Stop as stopped_message_generation", async () => {
    sim = await start({ rateLimits: false });
    const running = new Bot(sim.token, { client: { apiRoot: sim.apiRoot } });
    bot = running;
    running.command("ask", async (ctx) => {
      const draftId = ctx.update.update_id;
      for (const text of ["", "Thinking about", "Thinking about it"]) {
        await ctx.api.sendMessageDraft(ctx.chat.id, draftId, text, { can_stop: true });
      }
    });
    let stoppedDraft: number | undefined;
    running.on("stopped_message_generation", async (ctx) => {
      stoppedDraft = ctx.update.stopped_message_generation.draft_id;
      await ctx.reply("Stopped.");
    });
    await new Promise<void>((resolve) => {
      void running.start({ timeout: 10, onStart: () => resolve() });
    });
    const bea = sim.users.create({ firstName: "Bea" });
    const chat = sim.chats.createPrivate(bea);
    sim.sendCommand(bea, chat, "ask");
    await sim.waitForEvent(chat, (event) => event.kind === "draft" && event.draft?.frames === 3);
    expect(sim.transcript(chat).draft).toMatchObject({
      text: "Thinking about it",
      hasStopButton: true,
    });
    const stopped = sim.stopDraft(bea, chat);
    expect(await sim.waitForMessage(chat)).toMatchObject({ text: "Stopped." });
    expect(stoppedDraft).toBe(stopped.draft_id);
    expect(sim.transcript(chat).draft).toBeUndefined();
  }, 30_000);
});

// The chat page in a real browser (Debian's chromium, driven by playwright-core) against a real
// grammY bot long-polling the simulator: the first screen, typing, inline buttons, reply
// keyboards, a streamed draft and its Stop button, uploads, and the panel's fault buttons.

import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import type { MessageGenerationStopped, Update } from "@grammyjs/types";
import { describeWithChromium, eventually } from "@telepace/testing";
import { Bot, InlineKeyboard } from "grammy";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type BotApiSim, start } from "../src/index.js";
import { gradientPng } from "./helpers.js";

/** Where the README's screenshot goes when TELEPACE_UPDATE_SCREENSHOT=1. */
const SCREENSHOT = new URL("../docs/media/chat-page.png", import.meta.url);

let sim: BotApiSim;
let bot: Bot;
const updates: Update[] = [];
const stops: MessageGenerationStopped[] = [];
const downloads = new Map<string, Buffer>();

function startBot(): Promise<void> {
  bot = new Bot(sim.token, { client: { apiRoot: sim.apiRoot } });
  bot.use((ctx, next) => {
    updates.push(ctx.update);
    return next();
  });
  bot.command("start", (ctx) =>
    ctx.reply("Welcome, <b>friend</b>! I know <code>/ask</code> and <i>/menu</i>.", {
      parse_mode: "HTML",
      reply_markup: new InlineKeyboard()
        .text("Tap me", "tap")
        .url("Docs", "https://core.telegram.org/bots/api"),
    }),
  );
  bot.command("menu", (ctx) =>
    ctx.reply("Pick a colour", {
      reply_markup: {
        keyboard: [[{ text: "Red" }, { text: "Blue" }]],
        one_time_keyboard: true,
        resize_keyboard: true,
      },
    }),
  );
  bot.callbackQuery("tap", async (ctx) => {
    await ctx.answerCallbackQuery({ text: "Tapped!" });
    await ctx.editMessageText("Tapped ✓");
  });
  bot.command("ask", (ctx) => {
    // Streamed without awaiting, so the bot goes on polling and hears the Stop press.
    void stream(ctx.chat.id);
  });
  bot.on("stopped_message_generation", (ctx) => {
    stops.push(ctx.update.stopped_message_generation as MessageGenerationStopped);
  });
  bot.on("message:document", async (ctx) => {
    const file = await ctx.getFile();
    const response = await fetch(`${sim.apiRoot}/file/bot${sim.token}/${file.file_path}`);
    const bytes = Buffer.from(await response.arrayBuffer());
    const name = ctx.message.document.file_name ?? "";
    downloads.set(name, bytes);
    const sha = createHash("sha256").update(bytes).digest("hex").slice(0, 12);
    await ctx.reply(`Got ${name}: ${bytes.length} bytes, sha256 ${sha}`);
  });
  bot.on("message:text", (ctx) => ctx.reply(`echo: ${ctx.message.text}`));
  return new Promise((resolve) => {
    void bot.api
      .setMyCommands([
        { command: "start", description: "Say hello, with buttons" },
        { command: "menu", description: "A reply keyboard" },
        { command: "ask", description: "A streamed answer" },
      ])
      .then(() => bot.start({ timeout: 1, onStart: () => resolve() }));
  });
}

async function stream(chatId: number): Promise<void> {
  const words = "Streaming replies arrive word by word, like a model that is still thinking".split(
    " ",
  );
  let text = "";
  // Until Stop, or a minute: the test presses Stop after the page has seen it grow, which on a
  // busy machine can take longer than a short answer lasts.
  for (let frame = 0; frame < 240 && !stops.some((stop) => stop.draft_id === 42); frame++) {
    text += `${words[frame % words.length]} `;
    // The sim's draft limit is 5/s; one frame per 250 ms stays within it.
    await bot.api.sendMessageDraft(chatId, 42, text, { can_stop: true });
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

beforeAll(async () => {
  sim = await start();
  await startBot();
});

afterAll(async () => {
  if (bot?.isRunning()) await bot.stop();
  await sim?.close();
});

/** A private chat of a new user; its key in the page's list. */
function privateChat(firstName: string) {
  const user = sim.users.create({ firstName });
  const chat = sim.chats.createPrivate(user);
  return { user, chat, key: `p:${sim.bot.id}:${user.id}` };
}

/** Script errors and console errors of each page, checked when it is closed. */
const problems = new WeakMap<Page, string[]>();

async function openPage(browser: Browser): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const seen: string[] = [];
  problems.set(page, seen);
  page.on("pageerror", (error) => seen.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") seen.push(message.text());
  });
  await page.goto(sim.pageUrl);
  await page.locator("#live-status[data-status=live]").waitFor();
  return page;
}

async function closePage(page: Page): Promise<void> {
  await page.close();
  expect(problems.get(page)).toEqual([]);
}

async function openChat(page: Page, key: string): Promise<void> {
  await page.locator(`[data-chat-key="${key}"]`).click();
  await page.locator(`[data-chat-key="${key}"].selected`).waitFor();
  await page.locator("#composer-input").waitFor();
}

/** A new user's private chat, open in a new page. */
async function chatPage(browser: Browser, firstName: string) {
  const chat = privateChat(firstName);
  const page = await openPage(browser);
  await openChat(page, chat.key);
  return { ...chat, page };
}

/** Types into the composer and sends with Enter, as a person would. */
async function type(page: Page, text: string): Promise<void> {
  await page.locator("#composer-input").fill(text);
  await page.locator("#composer-input").press("Enter");
}

function bubble(page: Page, text: string) {
  return page.locator(".message .text", { hasText: text });
}

describeWithChromium(
  "the chat page in a browser",
  (options) => chromium.launch(options),
  (browser) => {
    it("lists chats with their newest message, and what the bot sends appears without reload", async () => {
      const ann = privateChat("Ann");
      const ben = privateChat("Ben");
      const group = sim.chats.createGroup({ title: "Book club", members: [ann.user, ben.user] });
      await bot.api.sendMessage(ann.chat.id, "Hello Ann");
      sim.sendText(ben.user, group, "Who read chapter 3?");
      const page = await openPage(browser());
      const titles = page.locator(".chat-item-title");
      await eventually("the list is loaded", async () =>
        expect((await titles.allTextContents()).slice(0, 2)).toEqual(["Book club", "Ann"]),
      );
      await expect(
        page.locator(`[data-chat-key="g:${group.id}"] .chat-item-preview`).textContent(),
      ).resolves.toBe("Ben: Who read chapter 3?");
      await expect(
        page.locator(`[data-chat-key="${ann.key}"] .chat-item-preview`).textContent(),
      ).resolves.toBe("Hello Ann");
      // A message through the Bot API moves Ben's chat to the top, with an unread badge.
      await bot.api.sendMessage(ben.chat.id, "Fresh news for Ben");
      await page.locator(`[data-chat-key="${ben.key}"] .badge`, { hasText: "1" }).waitFor();
      await eventually("Ben's chat is first", async () =>
        expect(await titles.first().textContent()).toBe("Ben"),
      );
      await openChat(page, ann.key);
      const sent = await bot.api.sendMessage(
        ann.chat.id,
        'Now <b>bold</b>, <code>code</code> and <a href="https://example.org/">a link</a>',
        { parse_mode: "HTML" },
      );
      const live = bubble(page, "Now bold");
      await live.waitFor();
      await expect(live.locator("strong").textContent()).resolves.toBe("bold");
      await expect(live.locator("code").textContent()).resolves.toBe("code");
      await expect(live.locator("a").getAttribute("href")).resolves.toBe("https://example.org/");
      await bot.api.editMessageText(ann.chat.id, sent.message_id, "Edited in place");
      const edited = page.locator(`.message[data-message-id="${sent.message_id}"]`);
      await edited.locator(".edited").waitFor();
      await expect(edited.locator(".text").textContent()).resolves.toContain("Edited in place");
      await bot.api.deleteMessage(ann.chat.id, sent.message_id);
      await edited.waitFor({ state: "detached" });
      await closePage(page);
    });

    it("sends what the person types to the bot as a message update", async () => {
      const cat = await chatPage(browser(), "Cat");
      const page = cat.page;
      await type(page, "hello from the page");
      await bubble(page, "echo: hello from the page").waitFor();
      expect(updates.map((update) => update.message)).toContainEqual(
        expect.objectContaining({ text: "hello from the page", from: cat.user, chat: cat.chat }),
      );
      // The bot's command menu sends /menu; its reply keyboard is shown, pressed (the text reaches
      // the bot) and hidden after one use.
      await page.locator("#commands-button").click();
      await page.locator(".command-item", { hasText: "A reply keyboard" }).click();
      const blue = page.locator(".keyboard-button", { hasText: "Blue" });
      await blue.click();
      await bubble(page, "echo: Blue").waitFor();
      expect(updates.some((update) => update.message?.text === "Blue")).toBe(true);
      await page.locator("#reply-keyboard").waitFor({ state: "hidden" });
      await closePage(page);
    });

    it("writes in a group as the member chosen, who alone sees a selective keyboard", async () => {
      const ivy = sim.users.create({ firstName: "Ivy" });
      const jon = sim.users.create({ firstName: "Jon" });
      const group = sim.chats.createGroup({ title: "Choir", members: [ivy, jon] });
      const page = await openPage(browser());
      await openChat(page, `g:${group.id}`);
      await type(page, "Ivy says hi");
      await page.locator(".message.out .text", { hasText: "Ivy says hi" }).waitFor();
      await page.locator("#send-as").selectOption(String(jon.id));
      // Ivy's message is now someone else's, with her name on it.
      await page.locator(".message.in .sender", { hasText: "Ivy" }).waitFor();
      await type(page, "Jon here");
      await page.locator(".message.out .text", { hasText: "Jon here" }).waitFor();
      const jons = sim.transcript(group).messages.find((m) => "text" in m && m.text === "Jon here");
      const sent = await bot.api.sendMessage(group.id, "Jon, pick one", {
        reply_parameters: { message_id: jons?.message_id ?? 0 },
        reply_markup: { keyboard: [[{ text: "Bass" }]], selective: true },
      });
      expect(sent.reply_to_message?.from?.id).toBe(jon.id);
      await page.locator(".keyboard-button", { hasText: "Bass" }).waitFor();
      await page.locator("#send-as").selectOption(String(ivy.id));
      await page.locator("#reply-keyboard").waitFor({ state: "hidden" });
      await closePage(page);
    });

    it("turns an inline button press into a callback query and shows the answer and the edit", async () => {
      const dan = await chatPage(browser(), "Dan");
      const page = dan.page;
      await type(page, "/start");
      const tap = page.locator(".inline-button", { hasText: "Tap me" });
      await tap.click();
      await page.locator(".toast", { hasText: "Tapped!" }).waitFor();
      await bubble(page, "Tapped ✓").waitFor();
      const query = updates.find((update) => update.callback_query?.from.id === dan.user.id);
      expect(query?.callback_query).toMatchObject({
        data: "tap",
        message: { chat: { id: dan.chat.id } },
      });
      await expect(tap.count()).resolves.toBe(0);
      await closePage(page);
    });

    it("animates a streamed draft, and its Stop button reaches the bot", {
      timeout: 60_000,
    }, async () => {
      const eve = privateChat("Eve");
      sim.sendPhoto(eve.user, eve.chat, { bytes: gradientPng(320, 200) }, { caption: "Sunset" });
      const page = await openPage(browser());
      await openChat(page, eve.key);
      await type(page, "/start");
      await page.locator(".inline-button", { hasText: "Tap me" }).waitFor();
      await type(page, "/ask");
      const draft = page.locator(".message.draft");
      await draft.waitFor();
      const lengthNow = async () => ((await draft.locator(".text").textContent()) ?? "").length;
      const first = await lengthNow();
      await eventually("the draft grows", async () =>
        expect(await lengthNow()).toBeGreaterThan(first + 10),
      );
      expect(Number(await draft.getAttribute("data-frames"))).toBeGreaterThan(1);
      if (process.env.TELEPACE_UPDATE_SCREENSHOT === "1") {
        await eventually("a few words streamed", async () =>
          expect(await lengthNow()).toBeGreaterThan(40),
        );
        mkdirSync(new URL(".", SCREENSHOT), { recursive: true });
        await page.screenshot({ path: SCREENSHOT.pathname });
      }
      await draft.locator(".stop-button").click();
      await eventually("the bot heard Stop", () =>
        expect(stops).toContainEqual(
          expect.objectContaining({
            draft_id: 42,
            chat: expect.objectContaining({ id: eve.chat.id }),
          }),
        ),
      );
      await draft.waitFor({ state: "detached" });
      expect(
        sim.transcript(eve.chat).events.filter((event) => event.kind === "draft_stop"),
      ).toHaveLength(1);
      await closePage(page);
    });

    it("uploads a file as a document the bot can getFile, with a download link", async () => {
      const fay = await chatPage(browser(), "Fay");
      const page = fay.page;
      const bytes = Buffer.from("name,score\nfay,42\n".repeat(200));
      await page.locator("#composer-input").fill("the report");
      await page
        .locator("#attach-input")
        .setInputFiles({ name: "report.csv", mimeType: "text/csv", buffer: bytes });
      const sha = createHash("sha256").update(bytes).digest("hex").slice(0, 12);
      await bubble(page, `Got report.csv: ${bytes.length} bytes, sha256 ${sha}`).waitFor();
      expect(downloads.get("report.csv")).toEqual(bytes);
      const card = page.locator(".message.out .document");
      await expect(card.locator(".document-name").textContent()).resolves.toBe("report.csv");
      await expect(
        page.locator(".message.out .text", { hasText: "the report" }).count(),
      ).resolves.toBe(1);
      const href = await card.getAttribute("href");
      const served = await fetch(`${sim.apiRoot}${href}`);
      expect(Buffer.from(await served.arrayBuffer())).toEqual(bytes);
      await closePage(page);
    });

    it("shows the chat's budget and 429s in the panel, and arms a 502 from it", async () => {
      const gus = await chatPage(browser(), "Gus");
      const page = gus.page;
      await page.locator(".gauge", { hasText: "This chat" }).waitFor();
      // A burst beyond the chat's limit: grammY's raw API does not pace it.
      for (let i = 0; i < 4; i++)
        await bot.api.sendMessage(gus.chat.id, `burst ${i}`).catch(() => {});
      await page.locator("#panel-429 .figures", { hasText: "1 in this chat" }).waitFor();
      await page.locator("#panel-429 .recent", { hasText: "sendMessage: retry after" }).waitFor();
      await page.locator("#fault-method").selectOption("deleteMessage");
      await page.locator("#arm-502").click();
      await page.locator("#armed-faults li", { hasText: "deleteMessage: 502 ×1" }).waitFor();
      expect(sim.faults.armed().queued).toEqual([
        expect.objectContaining({ method: "deletemessage", kind: "fail", code: 502, remaining: 1 }),
      ]);
      const burst = sim.transcript(gus.chat).messages[0]?.message_id ?? 0;
      await expect(bot.api.deleteMessage(gus.chat.id, burst)).rejects.toMatchObject({
        error_code: 502,
      });
      await page.locator("#fired-faults .recent", { hasText: "deleteMessage: fail" }).waitFor();
      await page.locator("#clear-faults").click();
      await page.locator("#armed-faults li", { hasText: "Nothing armed." }).waitFor();
      await closePage(page);
    });
  },
);

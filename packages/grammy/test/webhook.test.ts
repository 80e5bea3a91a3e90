// webhookCallback(bot) with real grammY under a real server of each adapter, fed by the sim's
// webhook delivery: every update answered once, each person's in order, stop() drains; and
// grammY's own webhookCallback forms are refused with the replacement named.

import { createDeferred } from "@telepace/core";
import {
  eventually,
  serveWebhook,
  WEBHOOK_FRAMEWORKS,
  type WebhookServer,
} from "@telepace/testing";
import { MemoryUpdateJournal } from "@telepace/update-dispatch";
import { afterEach, describe, expect, it } from "vitest";
import { type WebhookCallback, webhookCallback } from "../src/index.js";
import { type Fixture, fixture } from "./support.js";

const SECRET = "grammy_webhook-secret";

let f: Fixture | undefined;
let server: WebhookServer | undefined;
let webhook: WebhookCallback | undefined;
afterEach(async () => {
  await webhook?.stop();
  await server?.close();
  await f?.close();
  f = server = webhook = undefined;
});

describe.each(WEBHOOK_FRAMEWORKS)("webhookCallback(bot) on %s", (framework) => {
  it("answers every person in order, each update once, and stop() drains", async () => {
    f = await fixture();
    const { sim, bot } = f;
    const handled: number[] = [];
    bot.on("message:text", async (ctx) => {
      handled.push(ctx.update.update_id);
      await ctx.reply(`${ctx.me.username}: ${ctx.message.text}`);
    });
    webhook = webhookCallback(bot, { secretToken: SECRET });
    server = await serveWebhook(framework, webhook);
    await bot.api.setWebhook(server.url, { secret_token: SECRET });

    const people = Array.from({ length: 4 }, (_, i) => sim.users.create({ firstName: `P${i}` }));
    const chats = people.map((person) => sim.chats.createPrivate(person));
    for (let round = 0; round < 3; round++) {
      for (const [i, person] of people.entries())
        sim.sendText(person, chats[i] as never, `m${round}`);
    }
    for (const chat of chats) {
      await eventually("three replies", () =>
        expect(sim.transcript(chat).messages.filter((m) => m.from?.is_bot)).toHaveLength(3),
      );
      expect(
        sim
          .transcript(chat)
          .messages.filter((m) => m.from?.is_bot)
          .map((m) => ("text" in m ? m.text : "")),
      ).toEqual([0, 1, 2].map((round) => `${sim.bot.username}: m${round}`));
    }
    expect(new Set(handled).size).toBe(12);
    expect(handled).toHaveLength(12);
    await eventually("confirmed to Telegram", () => sim.pendingUpdates() === 0);
    expect(webhook.snapshot().answered.stored).toBe(12);
    expect(await webhook.stop()).toEqual({ status: "drained", unfinished: 0 });
  });
});

describe("webhookCallback(bot) when stopping or refusing", () => {
  it("answers 200 before the middleware finishes; stop() lets it finish and then refuses with 503", async () => {
    const journal = new MemoryUpdateJournal();
    f = await fixture();
    const { sim, bot } = f;
    const gate = createDeferred<void>();
    bot.on("message", async (ctx) => {
      await gate.promise;
      await ctx.reply("done");
    });
    webhook = webhookCallback(bot, { journal, secretToken: SECRET });
    server = await serveWebhook("node:http", webhook);
    await bot.api.setWebhook(server.url, { secret_token: SECRET });
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    sim.sendText(user, chat, "slow");
    // Confirmed to Telegram while the handler still waits: the journal holds it.
    await eventually("confirmed", () => sim.pendingUpdates() === 0);
    expect((await journal.unfinished()).map((update) => update.message?.text)).toEqual(["slow"]);

    const stopping = webhook.stop();
    sim.sendText(user, chat, "after stop");
    await eventually("refused while stopping", () => webhook?.snapshot().answered.closed !== 0);
    gate.resolve();
    expect(await stopping).toEqual({ status: "drained", unfinished: 0 });
    expect(sim.transcript(chat).messages.at(-1)).toMatchObject({ text: "done" });
    // The refused update stays with Telegram for the next process.
    expect(sim.pendingUpdates()).toBe(1);
  });

  it("refuses a request without the secret token", async () => {
    f = await fixture();
    webhook = webhookCallback(f.bot, { secretToken: SECRET });
    server = await serveWebhook("express", webhook);
    const answer = await fetch(server.url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ update_id: 1, message: { text: "forged" } }),
    });
    expect(answer.status).toBe(401);
    expect(webhook.intake.snapshot().appended).toBe(0);
  });

  it("refuses grammY's adapter argument and options, naming what to use", () => {
    const bot = {} as never;
    expect(() => webhookCallback(bot, "express" as never)).toThrow(
      "use `webhookCallback(bot, options).express`",
    );
    expect(() => webhookCallback(bot, "std/http" as never)).toThrow(".fetch`");
    expect(() => webhookCallback(bot, { timeoutMilliseconds: 5000 } as never)).toThrow(
      "Unknown option `timeoutMilliseconds` in `options` (use `timeoutMs`",
    );
    expect(() => webhookCallback(bot, { secretTokn: "x" } as never)).toThrow(
      "(did you mean `secretToken`?)",
    );
    expect(() => webhookCallback(bot, { maxBodyBytes: 1 })).toThrow(RangeError);
  });
});

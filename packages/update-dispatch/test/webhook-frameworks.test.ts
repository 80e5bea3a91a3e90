// webhookHandler under a real server of each framework, fed by the sim's webhook delivery as
// Telegram feeds a bot: several chats at once, one chat in order, 503s at maxUnfinished that
// the sim retries. Every update is processed once, in per-chat order, and none is lost. And
// each framework's answers to a wrong secret, a body that is not JSON and one over the bound.

import type { Update } from "@grammyjs/types";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { createDeferred } from "@telepace/core";
import {
  eventually,
  serveWebhook,
  WEBHOOK_FRAMEWORKS,
  type WebhookServer,
} from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import { UpdateIntake, webhookHandler } from "../src/index.js";

const SECRET = "framework-test_secret";

/** Calls a Bot API method of the sim over HTTP. */
async function botApi(sim: BotApiSim, method: string, params: object): Promise<unknown> {
  const response = await fetch(`${sim.apiRoot}/bot${sim.token}/${method}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(params),
  });
  return ((await response.json()) as { result: unknown }).result;
}

let sim: BotApiSim | undefined;
let server: WebhookServer | undefined;
let intake: UpdateIntake | undefined;
afterEach(async () => {
  await sim?.close({ timeoutMs: 500 });
  await server?.close();
  await intake?.close({ timeoutMs: 0 });
  sim = server = intake = undefined;
});

describe.each(WEBHOOK_FRAMEWORKS)("webhookHandler on %s, fed by the sim", (framework) => {
  it("processes every update once, in per-chat order, through 503s at the bound", async () => {
    sim = await start({ rateLimits: false, timeScale: 50 });
    const processed: Update[] = [];
    const held = createDeferred<void>();
    intake = new UpdateIntake(
      async (update) => {
        await held.promise; // until the intake has refused something at its bound
        processed.push(update);
      },
      { maxUnfinished: 4 },
    );
    const webhook = webhookHandler(intake, { secretToken: SECRET });
    server = await serveWebhook(framework, webhook);
    await botApi(sim, "setWebhook", { url: server.url, secret_token: SECRET, max_connections: 8 });

    const users = Array.from({ length: 6 }, (_, i) => sim?.users.create({ firstName: `U${i}` }));
    const chats = users.map((user) => sim?.chats.createPrivate(user as never));
    const sent = new Map<number, string[]>();
    for (let round = 0; round < 5; round++) {
      for (const [i, user] of users.entries()) {
        const text = `${i}/${round}`;
        sim.sendText(user as never, chats[i] as never, text);
        sent.set(i, [...(sent.get(i) ?? []), text]);
      }
    }
    await eventually("a 503 at maxUnfinished", () => webhook.snapshot().answered.busy > 0);
    held.resolve();
    await eventually("all 30 processed", () => expect(processed).toHaveLength(30), {
      timeoutMs: 15_000,
    });
    await eventually("Telegram holds nothing", () => sim?.pendingUpdates() === 0);

    const ids = processed.map((update) => update.update_id);
    expect(new Set(ids).size).toBe(30); // nothing twice
    for (const [i, texts] of sent) {
      const chatId = chats[i]?.id;
      expect(
        processed.filter((u) => u.message?.chat.id === chatId).map((u) => u.message?.text),
      ).toEqual(texts);
    }
    const answered = webhook.snapshot().answered;
    expect(answered.stored).toBe(30);
    expect(answered.unauthorized + answered["not-json"] + answered["journal-failed"]).toBe(0);
    expect(sim.counters()).toMatchObject({ webhookConfirmed: 30 });
    expect(sim.counters().webhookFailures).toBe(answered.busy);
  });

  it("answers 401 to a wrong secret, 400 to a body that is not JSON, 413 over maxBodyBytes", async () => {
    const processed: Update[] = [];
    intake = new UpdateIntake((update) => {
      processed.push(update);
    });
    server = await serveWebhook(
      framework,
      webhookHandler(intake, { secretToken: SECRET, maxBodyBytes: 2048 }),
    );
    const send = async (body: string, secret = SECRET) =>
      (
        await fetch(server?.url as string, {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            "X-Telegram-Bot-Api-Secret-Token": secret,
          },
          body,
        })
      ).status;
    const update = JSON.stringify({ update_id: 7, message: { text: "x" } });
    expect(await send(update, "wrong")).toBe(401);
    expect(await send("{not json")).toBe(400);
    expect(await send(JSON.stringify({ update_id: 8, pad: "p".repeat(4096) }))).toBe(413);
    expect(await send(update)).toBe(200);
    await eventually("processed", () => processed.length === 1);
    expect(processed.map((u) => u.update_id)).toEqual([7]);
  });
});

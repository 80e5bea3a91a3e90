// A Stop press stops its stream under every way of running a grammY bot, even while the handler
// awaiting the stream holds that chat's later updates behind itself: grammY's bot.start()
// (one update at a time), grammY runner with sequentialize by chat, and run(bot) or
// webhookCallback(bot) with every slot taken.

import { run as runnerRun, sequentialize } from "@grammyjs/runner";
import { serveWebhook, type WebhookServer } from "@telepace/testing";
import { Bot, type Context } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import {
  run,
  type StreamFlavor,
  type StreamOutcome,
  type StreamSource,
  type TelepaceTransformer,
  webhookCallback,
} from "../src/index.js";
import { type Fixture, fixture } from "./support.js";

type StreamContext = Context & StreamFlavor;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cleanup: (() => Promise<unknown> | unknown)[] = [];
let f: Fixture | undefined;
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
  await f?.close();
  f = undefined;
});

/** Words for about 5 s unless its signal aborts. */
const longAnswer: StreamSource = async function* (signal) {
  for (let i = 0; i < 500 && !signal.aborted; i++) {
    yield `w${i} `;
    await sleep(10);
  }
};

/** A bot whose handler awaits a long stream with a Stop button, and the outcome it got. */
async function streamingBot() {
  f = await fixture();
  const bot = new Bot<StreamContext>(f.sim.token, { client: { apiRoot: f.sim.apiRoot } });
  bot.api.config.use(f.pace as TelepaceTransformer);
  bot.use(f.pace.middleware());
  const outcomes: StreamOutcome[] = [];
  bot.on("message:text", async (ctx) => {
    outcomes.push(await ctx.replyWithStream(longAnswer, { canStop: true }).result);
  });
  const user = f.sim.users.create();
  const chat = f.sim.chats.createPrivate(user);
  return { sim: f.sim, bot, outcomes, user, chat };
}

/** Asks, waits for the Stop button, presses it and returns the outcome the handler got. */
async function askAndStop(setup: Awaited<ReturnType<typeof streamingBot>>) {
  const { sim, user, chat, outcomes } = setup;
  sim.sendText(user, chat, "tell me everything");
  await sim.waitForEvent(chat, (event) => event.kind === "draft" && (event.text ?? "") !== "", {
    timeoutMs: 5_000,
  });
  sim.stopDraft(user, chat);
  const startedAt = performance.now();
  while (outcomes.length === 0 && performance.now() - startedAt < 4_000) await sleep(10);
  return outcomes[0];
}

function expectStopped(outcome: StreamOutcome | undefined) {
  expect(outcome).toMatchObject({ status: "delivered", stopped: true });
  const final = outcome?.messages.at(-1)?.text ?? "";
  // The text so far: the first draft with text may show a single word (a draft goes as soon as
  // the "Thinking…" one is answered), and Stop can come right after it.
  expect(final.startsWith("w0")).toBe(true);
  expect(final.split(" ").length).toBeLessThan(400); // stopped early, not at the source's end
}

describe("Stop while the handler awaits its stream", () => {
  it("under grammY's bot.start(), one update at a time", async () => {
    const setup = await streamingBot();
    void setup.bot.start({ timeout: 1 });
    cleanup.push(() => setup.bot.stop());
    expectStopped(await askAndStop(setup));
  });

  it("under grammY runner with sequentialize by chat", async () => {
    const setup = await streamingBot();
    const sequential = new Bot<StreamContext>(setup.sim.token, {
      client: { apiRoot: setup.sim.apiRoot },
    });
    sequential.api.config.use(f?.pace as TelepaceTransformer);
    sequential.use(sequentialize((ctx) => ctx.chat?.id.toString()));
    sequential.use(setup.bot);
    const runner = runnerRun(sequential, { runner: { fetch: { timeout: 1 } } });
    cleanup.push(() => runner.isRunning() && runner.stop());
    expectStopped(await askAndStop(setup));
  });

  it("under run(bot) with its one slot busy", async () => {
    const setup = await streamingBot();
    const runner = run(setup.bot, { pollTimeoutSeconds: 1, dispatcher: { maxConcurrency: 1 } });
    cleanup.push(() => runner.stop());
    expectStopped(await askAndStop(setup));
  });

  it("under webhookCallback(bot) with its one slot busy", async () => {
    const setup = await streamingBot();
    const webhook = webhookCallback(setup.bot, { dispatcher: { maxConcurrency: 1 } });
    const server: WebhookServer = await serveWebhook("node:http", webhook);
    cleanup.push(() => server.close());
    cleanup.push(() => webhook.stop());
    await setup.bot.api.setWebhook(server.url);
    expectStopped(await askAndStop(setup));
  });
});

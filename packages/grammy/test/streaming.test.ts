// ctx.replyWithStream with real grammY against the sim: drafts then a real message in a private
// chat, a progress message replaced by the final in a group, and a Stop press (routed by
// pace.middleware()) aborting the producer's signal.

import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { eventually } from "@telepace/testing";
import { Bot, type Context, type Transformer } from "grammy";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import {
  type MessageStream,
  type StreamFlavor,
  type StreamOutcome,
  type StreamSource,
  type TelepaceTransformer,
  telepace,
} from "../src/index.js";
import { SCALE, scaledRates } from "./support.js";

type StreamContext = Context & StreamFlavor;

let sim: BotApiSim | undefined;
let pace: TelepaceTransformer | undefined;
afterEach(async () => {
  await pace?.close({ drain: false, timeoutMs: 1_000 });
  await sim?.close({ timeoutMs: 1_000 });
  sim = undefined;
  pace = undefined;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Words at a steady rate, like a model's tokens; stops when the signal aborts. */
function tokens(count: number, everyMs: number): StreamSource {
  return async function* (signal) {
    for (let i = 0; i < count && !signal.aborted; i++) {
      yield `w${i} `;
      await sleep(everyMs);
    }
  };
}

const words = (count: number) =>
  Array.from({ length: count }, (_, i) => `w${i}`)
    .join(" ")
    .trim();

/** A sim, a bot with telepace and its middleware, and a handler that streams what it is given. */
async function setup(source: StreamSource, options: { canStop?: boolean } = {}) {
  sim = await start({ timeScale: SCALE });
  const bot = new Bot<StreamContext>(sim.token, { client: { apiRoot: sim.apiRoot } });
  pace = telepace(scaledRates);
  bot.api.config.use(pace);
  bot.use(pace.middleware());
  const streams: MessageStream[] = [];
  bot.on("message:text", (ctx) => {
    streams.push(ctx.replyWithStream(source, options));
  });
  let skipped = 0;
  bot.on("stopped_message_generation", () => {
    skipped++;
  });
  await bot.init();
  let offset = 0;
  /** Fetches what the sim has for the bot and handles it, as polling would. */
  const deliver = async () => {
    for (const update of await bot.api.getUpdates({ offset, timeout: 0 })) {
      offset = update.update_id + 1;
      await bot.handleUpdate(update);
    }
  };
  return { sim, bot, streams, deliver, skippedStops: () => skipped };
}

describe("ctx.replyWithStream", () => {
  it("private chat: draft frames, then one real message", async () => {
    const { sim, streams, deliver } = await setup(tokens(30, 10));
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    sim.sendText(user, chat, "hi");
    await deliver();
    expect(streams).toHaveLength(1);
    const outcome = await streams[0]?.result;
    expectTypeOf(outcome).toEqualTypeOf<StreamOutcome | undefined>();
    expect(outcome).toMatchObject({ status: "delivered", mode: "draft", stopped: false });
    const { events, messages, draft } = sim.transcript(chat);
    const kinds = events.filter((event) => event.actor === "bot").map((event) => event.kind);
    expect(kinds.filter((kind) => kind === "draft").length).toBeGreaterThan(1);
    expect(kinds.filter((kind) => kind !== "draft")).toEqual(["send"]);
    expect(kinds.at(-1)).toBe("send"); // the drafts came before the message
    expect(messages.map((message) => message.text)).toEqual(["hi", words(30)]);
    expect(draft).toBeUndefined();
    expect(sim.counters().tooManyRequests).toBe(0);
  });

  it("group: a progress message with edits, replaced by the final", async () => {
    const { sim, streams, deliver } = await setup(tokens(30, 10));
    const user = sim.users.create();
    const group = sim.chats.createSupergroup({ members: [user] });
    sim.sendCommand(user, group, "ask"); // a command: the bot has privacy mode in groups
    await deliver();
    const outcome = await streams[0]?.result;
    expect(outcome).toMatchObject({ status: "delivered", mode: "edit" });
    const bot = sim.transcript(group).events.filter((event) => event.actor === "bot");
    expect(bot.filter((event) => event.kind === "draft")).toHaveLength(0);
    expect(bot.filter((event) => event.kind === "send")).toHaveLength(2);
    expect(bot.filter((event) => event.kind === "edit").length).toBeGreaterThan(0);
    await eventually("the progress message is deleted", () =>
      expect(sim.transcript(group).events.some((event) => event.kind === "delete")).toBe(true),
    );
    const texts = sim.transcript(group).messages.flatMap((message) => message.text ?? []);
    expect(texts.at(-1)).toBe(words(30));
    expect(texts.filter((text) => !text.startsWith("/ask"))).toEqual([words(30)]);
    expect(sim.counters().tooManyRequests).toBe(0);
  });

  it("a Stop press goes through the middleware and aborts the producer's signal", async () => {
    let aborted: unknown;
    const producer: StreamSource = async function* (signal) {
      signal.addEventListener("abort", () => {
        aborted = signal.reason;
      });
      for (let i = 0; i < 500 && !signal.aborted; i++) {
        yield `w${i} `;
        await sleep(10);
      }
    };
    const { sim, streams, deliver, skippedStops } = await setup(producer, { canStop: true });
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    sim.sendText(user, chat, "hi");
    await deliver();
    await eventually("a draft with a Stop button is shown", () =>
      expect(sim.transcript(chat).draft?.text?.startsWith("w0 w1")).toBe(true),
    );
    expect(sim.transcript(chat).draft?.hasStopButton).toBe(true);
    sim.stopDraft(user, chat);
    await deliver();
    const outcome = await streams[0]?.result;
    expect(outcome).toMatchObject({ status: "delivered", stopped: true });
    expect(aborted).toMatchObject({ code: "ERR_STREAM_STOPPED" });
    expect(skippedStops()).toBe(0); // the routed Stop went no further
    expect(pace?.streams.snapshot().stopsRouted).toBe(1);
    const final = sim.transcript(chat).messages.at(-1)?.text ?? "";
    expect(final.startsWith("w0 w1")).toBe(true);
    expect(final.length).toBeLessThan(words(500).length);
  });

  it("the middleware needs the flavor on the bot's context, and adds a typed method", () => {
    const flavored = new Bot<StreamContext>("1:x");
    flavored.use(telepace().middleware());
    expectTypeOf<StreamContext["replyWithStream"]>().returns.toEqualTypeOf<MessageStream>();
    const plain = new Bot("1:x");
    // @ts-expect-error a Bot<Context> has no ctx.replyWithStream: add StreamFlavor to its context
    plain.use(telepace().middleware());
  });

  it("a webhook-style bot (botInfo given, no call yet) streams; topic replies stay in the topic", async () => {
    const calls: { method: string; payload: Record<string, unknown> }[] = [];
    const chat = { id: -100_123, type: "supergroup", title: "Forum", is_forum: true } as const;
    const bot = new Bot<StreamContext>("1:x", {
      botInfo: {
        id: 1,
        is_bot: true,
        first_name: "Bot",
        username: "bot",
        can_join_groups: true,
        can_read_all_group_messages: false,
        supports_inline_queries: false,
        can_connect_to_business: false,
        has_main_web_app: false,
        has_topics_enabled: false,
        allows_users_to_create_topics: false,
        can_manage_bots: false,
        supports_join_request_queries: false,
      },
    });
    // Telegram, as far as this test needs it: every send answers a message, every edit true.
    const telegram: Transformer = async (_prev, method, payload) => {
      calls.push({ method, payload: { ...payload } });
      const result = method === "sendMessage" ? { message_id: 10, date: 0, chat } : true;
      return { ok: true, result } as Awaited<ReturnType<Transformer>>;
    };
    bot.api.config.use(telegram);
    pace = telepace(scaledRates);
    bot.api.config.use(pace);
    bot.use(pace.middleware());
    let stream: MessageStream | undefined;
    bot.on("message:text", (ctx) => {
      stream = ctx.replyWithStream(["a ", "b"]);
    });
    await bot.handleUpdate({
      update_id: 1,
      message: {
        message_id: 5,
        date: 0,
        chat,
        from: { id: 42, is_bot: false, first_name: "Dana" },
        text: "hi",
        is_topic_message: true,
        message_thread_id: 7,
      },
    });
    const outcome = await stream?.result;
    expect(outcome?.status).toBe("delivered");
    // The stream's first request, made before any call went through the transformer, arrived too.
    expect(pace.snapshot().counters).toMatchObject({ failed: 0 });
    const sends = calls.filter((call) => call.method === "sendMessage");
    expect(sends.length).toBeGreaterThan(0);
    for (const send of sends) expect(send.payload.message_thread_id).toBe(7);
    expect(calls.some((call) => call.method.startsWith("telepace"))).toBe(false);
  });

  it("an update without a chat is refused with a TypeError", async () => {
    sim = await start({ timeScale: SCALE });
    const bot = new Bot<StreamContext>(sim.token, { client: { apiRoot: sim.apiRoot } });
    pace = telepace(scaledRates);
    bot.api.config.use(pace);
    bot.use(pace.middleware());
    let thrown: unknown;
    bot.on("poll", (ctx) => {
      try {
        ctx.replyWithStream(["x"]);
      } catch (error) {
        thrown = error;
      }
    });
    await bot.init();
    await bot.handleUpdate({
      update_id: 1,
      poll: {
        id: "1",
        question: "?",
        options: [],
        total_voter_count: 0,
        is_closed: false,
        is_anonymous: true,
        type: "regular",
        allows_multiple_answers: false,
        allows_revoting: false,
        members_only: false,
      },
    });
    expect(thrown).toBeInstanceOf(TypeError);
  });
});

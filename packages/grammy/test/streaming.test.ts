// ctx.replyWithStream with real grammY against the sim: awaited as @grammyjs/stream's is, drafts
// then a real message in a private chat, a progress message finished in place in a group, and a
// Stop press (routed by pace.middleware()) aborting the producer's signal.

import { eventually } from "@telepace/testing";
import { Bot, type Context, GrammyError, type Transformer } from "grammy";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import {
  type ReplyStream,
  type StreamFlavor,
  type StreamOutcome,
  type StreamSource,
  type TelepaceTransformer,
  telepace,
} from "../src/index.js";
import { type StreamingBot, scaledRates, streamingBot } from "./support.js";

type StreamContext = Context & StreamFlavor;

let f: StreamingBot<StreamContext> | undefined;
let pace: TelepaceTransformer | undefined;
afterEach(async () => {
  await f?.close();
  await pace?.close({ drain: false, timeoutMs: 1_000 });
  f = pace = undefined;
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

/** A sim and a bot with telepace and its middleware; `handle` is its text handler. */
async function setupWith(handle: (ctx: StreamContext) => Promise<unknown> | unknown) {
  f = await streamingBot<StreamContext>();
  const { sim, bot, deliver } = f;
  const failures: unknown[] = [];
  bot.on("message:text", async (ctx) => {
    try {
      await handle(ctx);
    } catch (error) {
      failures.push(error);
    }
  });
  const user = sim.users.create();
  const chat = sim.chats.createPrivate(user);
  sim.sendText(user, chat, "hi");
  await deliver();
  return { sim, chat, failures };
}

/** A sim, a bot with telepace and its middleware, and a handler that streams what it is given. */
async function setup(source: StreamSource, options: { canStop?: boolean } = {}) {
  f = await streamingBot<StreamContext>();
  const { sim, bot, deliver } = f;
  const streams: ReplyStream[] = [];
  bot.on("message:text", (ctx) => {
    streams.push(ctx.replyWithStream(source, options));
  });
  let skipped = 0;
  // Not bot.on("stopped_message_generation"): that filter is newer than the oldest grammY claimed.
  bot.use((ctx) => {
    if ("stopped_message_generation" in ctx.update) skipped++;
  });
  return { sim, bot, streams, deliver, skippedStops: () => skipped };
}

describe("await ctx.replyWithStream, as @grammyjs/stream users write it", () => {
  it("waits until the stream has ended, so the chat's next reply comes after it", async () => {
    const { sim, chat, failures } = await setupWith(async (ctx) => {
      const messages = await ctx.replyWithStream(tokens(20, 10));
      await ctx.reply(`sent ${messages.length}`);
    });
    expect(failures).toEqual([]);
    expect(sim.transcript(chat).messages.map((message) => message.text)).toEqual([
      "hi",
      words(20),
      "sent 1",
    ]);
  });

  it("rejects as ctx.reply would when the answer cannot be delivered", async () => {
    const { failures } = await setupWith(async (ctx) => {
      f?.sim.faults.failNext("sendMessage", 5, { code: 400, description: "Bad Request: no" });
      await ctx.replyWithStream(["never ", "arrives"]);
    });
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(GrammyError);
    expect(failures[0]).toMatchObject({ error_code: 400, method: "sendMessage" });
  });

  it("takes its pieces with entities; names what to use for the peer's other arguments", async () => {
    const thrown: unknown[] = [];
    const { sim, chat } = await setupWith(async (ctx) => {
      const other = { parse_mode: "HTML" } as never;
      for (const call of [
        () => ctx.replyWithStream(["x"], other),
        () => (ctx.replyWithStream as (...args: unknown[]) => unknown)(["x"], {}, {}),
        () => ctx.replyWithStream(["x"], { params: { text: "x" } }),
      ]) {
        try {
          call();
        } catch (error) {
          thrown.push(error);
        }
      }
      await ctx.replyWithStream([
        "Hello, ",
        { text: "world", entities: [{ type: "bold", offset: 7, length: 5 }] },
      ]);
    });
    expect(thrown.map(String)).toEqual([
      "TypeError: Unknown option `parse_mode` in `options` (use `parseMode`)",
      expect.stringContaining("TypeError: replyWithStream(source, options) takes two arguments"),
      "TypeError: Unknown option `text` in `params` (the stream sets it)",
    ]);
    expect(sim.transcript(chat).messages.at(-1)).toMatchObject({
      text: "Hello, world",
      entities: [{ type: "bold", offset: 7, length: 5 }],
    });
  });
});

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

  it("group: a progress message with edits, finished in place", async () => {
    const { sim, streams, deliver } = await setup(tokens(30, 10));
    const user = sim.users.create();
    const group = sim.chats.createSupergroup({ members: [user] });
    sim.sendCommand(user, group, "ask"); // a command: the bot has privacy mode in groups
    await deliver();
    const outcome = await streams[0]?.result;
    expect(outcome).toMatchObject({ status: "delivered", mode: "edit" });
    const bot = sim.transcript(group).events.filter((event) => event.actor === "bot");
    expect(bot.filter((event) => event.kind === "draft")).toHaveLength(0);
    // One message from the first words to the final: no second message, nothing deleted.
    expect(bot.filter((event) => event.kind === "send")).toHaveLength(1);
    expect(bot.filter((event) => event.kind === "edit").at(-1)?.text).toBe(words(30));
    expect(bot.filter((event) => event.kind === "delete")).toHaveLength(0);
    const texts = sim.transcript(group).messages.flatMap((message) => message.text ?? []);
    expect(texts.filter((text) => !text.startsWith("/ask"))).toEqual([words(30)]);
    expect(sim.counters().tooManyRequests).toBe(0);
  });

  it("group: after another message of the bot the final is a new message, at the bottom", async () => {
    f = await streamingBot<StreamContext>();
    const { sim, bot, deliver } = f;
    const user = sim.users.create();
    const group = sim.chats.createSupergroup({ members: [user] });
    let outcome: StreamOutcome | undefined;
    bot.command("ask", async (ctx) => {
      const stream = ctx.replyWithStream(tokens(30, 10));
      await sleep(100);
      await ctx.api.sendMessage(group.id, "meanwhile, for someone else");
      outcome = await stream.result;
    });
    sim.sendCommand(user, group, "ask");
    await deliver();
    expect(outcome).toMatchObject({ status: "delivered", mode: "edit" });
    await eventually("the progress message is deleted", () =>
      expect(sim.transcript(group).events.some((event) => event.kind === "delete")).toBe(true),
    );
    const texts = sim.transcript(group).messages.flatMap((message) => message.text ?? []);
    expect(texts.filter((text) => !text.startsWith("/ask"))).toEqual([
      "meanwhile, for someone else",
      words(30),
    ]);
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
    expect(f?.pace.streams.snapshot().stopsRouted).toBe(1);
    const final = sim.transcript(chat).messages.at(-1)?.text ?? "";
    expect(final.startsWith("w0 w1")).toBe(true);
    expect(final.length).toBeLessThan(words(500).length);
  });

  it("the middleware needs the flavor on the bot's context, and adds a typed method", () => {
    const flavored = new Bot<StreamContext>("1:x");
    flavored.use(telepace().middleware());
    expectTypeOf<StreamContext["replyWithStream"]>().returns.toEqualTypeOf<ReplyStream>();
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
    let stream: ReplyStream | undefined;
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
    f = await streamingBot<StreamContext>();
    const { bot } = f;
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

// The public types of the plugin, checked by the compiler (vitest's typecheck): it fits grammY's
// own types with no cast in user code, its options are the outbox's with unknown keys refused,
// and the context flavor streams.

import type { Message } from "@grammyjs/types";
import type { OutboxSnapshot, TelegramOutbox } from "@telepace/outbox";
import { type Api, Bot, type Context, type Transformer } from "grammy";
import { describe, expectTypeOf, it } from "vitest";
import {
  type MessageStream,
  type MethodClass,
  methodClasses,
  type RunnerHandle,
  replaceProgress,
  replacing,
  run,
  type StreamFlavor,
  type TelepaceTransformer,
  telepace,
} from "../src/index.js";

describe("types", () => {
  it("telepace() is a grammY Transformer, and run() takes any Bot", () => {
    expectTypeOf<TelepaceTransformer>().toExtend<Transformer>();
    expectTypeOf(run<Context>)
      .parameter(0)
      .toEqualTypeOf<Bot<Context>>();
    expectTypeOf(run<Context>).returns.toEqualTypeOf<RunnerHandle>();
    expectTypeOf(replaceProgress).returns.resolves.toEqualTypeOf<Message.TextMessage>();
  });

  it("replacing() is the `other` of a send, alone or spread, and no edit's", () => {
    const bot = new Bot("1:x");
    bot.api.config.use(telepace());
    const api: Api = bot.api;
    const typed = () => {
      void api.sendMessage(1, "done", replacing(2));
      void api.sendPhoto(1, "file-id", { ...replacing(2), caption: "done" });
      bot.command("x", (ctx) => ctx.reply("Done.", { ...replacing(2), parse_mode: "HTML" }));
      // @ts-expect-error edits have no `disable_notification`, so the marker is refused.
      void api.editMessageText(1, 2, "x", replacing(2));
    };
    expectTypeOf(typed).toBeFunction();
  });

  it("takes the outbox's options, and refuses a throttler's or a misspelt one", () => {
    expectTypeOf(telepace({ privateChatRps: 1 }).outbox).toEqualTypeOf<TelegramOutbox>();
    expectTypeOf(telepace().snapshot()).toEqualTypeOf<OutboxSnapshot>();
    // @ts-expect-error transformer-throttler's option: telepace paces by itself
    telepace({ global: { maxConcurrent: 1 } });
    // @ts-expect-error a misspelt option
    telepace({ maxInflight: 1 });
  });

  it("classifies every method, and the stream flavor adds replyWithStream", () => {
    expectTypeOf(methodClasses.sendMessage).toEqualTypeOf<"send">();
    expectTypeOf(methodClasses).toExtend<Readonly<Record<string, MethodClass>>>();
    expectTypeOf<StreamFlavor["replyWithStream"]>().returns.toEqualTypeOf<MessageStream>();
    const bot = new Bot<Context & StreamFlavor>("1:x");
    bot.on("message", (ctx) => {
      expectTypeOf(ctx.replyWithStream("text")).toEqualTypeOf<MessageStream>();
    });
  });
});

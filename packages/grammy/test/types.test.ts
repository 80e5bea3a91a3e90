// Type-level checks under the repo's strict settings (tsc --noEmit runs them; vitest runs the
// few runtime lines): the plugin fits grammY's own types with no cast in user code.

import type { Message } from "@grammyjs/types";
import { type Api, Bot, type Context, type Transformer } from "grammy";
import { describe, expectTypeOf, it } from "vitest";
import {
  type RunnerHandle,
  replaceProgress,
  replacing,
  run,
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
});

// The list of real Bot API methods matches @grammyjs/types exactly, so "not implemented" (400) and
// "method not found" (404) are told apart correctly as the types evolve.

import type { ApiMethods } from "@grammyjs/types";
import { describe, expect, expectTypeOf, it } from "vitest";
import { BOT_API_METHODS, type BotApiMethod, IMPLEMENTED_METHODS } from "../src/index.js";
import { canonicalMethod } from "../src/methods/known-methods.js";

describe("known methods", () => {
  it("are exactly the methods of @grammyjs/types", () => {
    expectTypeOf<BotApiMethod>().toEqualTypeOf<keyof ApiMethods<unknown>>();
    expect(new Set(BOT_API_METHODS).size).toBe(BOT_API_METHODS.length);
  });

  it("map any spelling to the canonical name", () => {
    expect(canonicalMethod("SENDMESSAGE")).toBe("sendMessage");
    expect(canonicalMethod("getme")).toBe("getMe");
    expect(canonicalMethod("sendmessages")).toBeUndefined();
  });

  it("include every implemented method", () => {
    for (const method of IMPLEMENTED_METHODS) expect(BOT_API_METHODS).toContain(method);
    expect(IMPLEMENTED_METHODS).toEqual([
      "answerCallbackQuery",
      "deleteMessage",
      "deleteMessages",
      "deleteMyCommands",
      "deleteWebhook",
      "editMessageCaption",
      "editMessageReplyMarkup",
      "editMessageText",
      "getChat",
      "getFile",
      "getMe",
      "getMyCommands",
      "getUpdates",
      "getWebhookInfo",
      "sendChatAction",
      "sendDocument",
      "sendMessage",
      "sendMessageDraft",
      "sendPhoto",
      "setMyCommands",
      "setWebhook",
    ]);
  });
});

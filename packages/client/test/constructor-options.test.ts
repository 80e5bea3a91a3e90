// The constructor's first check: the options object itself. A missing argument names `options`,
// not the `token` inside it, so the message points at what the caller left out.

import { describe, expect, it } from "vitest";
import { TelegramClient } from "../src/index.js";

describe("new TelegramClient(options)", () => {
  it("names `options` when there is no options object", () => {
    const construct = (options: unknown) => () => new TelegramClient(options as never);
    expect(construct(undefined)).toThrow(
      new TypeError("Expected `options` to be an object with the bot's `token`, got undefined"),
    );
    expect(construct(null)).toThrow(
      new TypeError("Expected `options` to be an object with the bot's `token`, got null"),
    );
    // `new TelegramClient(token)`, grammY's habit: the message says what to pass, never the token.
    expect(construct("123456:AAH-secret")).toThrow(
      new TypeError(
        "Expected `options` to be an object with the bot's `token`, got a string (pass `{ token }`, not the token itself)",
      ),
    );
  });

  it("names `token` when the options have none", () => {
    expect(() => new TelegramClient({} as never)).toThrow(
      new TypeError("Expected `token` to be a bot token (no spaces or slashes), got undefined"),
    );
  });
});

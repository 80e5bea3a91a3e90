// The one rule for a bot token's shape (BOT_TOKEN_SHAPE, isBotToken): what @BotFather issues, with
// room for a few characters more or less, and nothing that Telegram could never have issued.

import { describe, expect, it } from "vitest";
import { BOT_TOKEN_SHAPE, isBotToken, start } from "../src/index.js";

const SECRET_35 = "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw8";

describe("isBotToken", () => {
  it.each([
    `123456789:${SECRET_35}`,
    // Telegram's documentation shows a 34-character secret.
    "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    `7:${"a".repeat(30)}`,
    `9007199254740:${"_-".repeat(20)}`,
  ])("accepts %s", (token) => {
    expect(isBotToken(token)).toBe(true);
  });

  it.each([
    ["a secret under 30 characters", "123456:TESTsecretABCdef"],
    ["no bot id", `:${SECRET_35}`],
    ["a leading zero", `0123:${SECRET_35}`],
    ["the bot prefix of URLs", `bot123456789:${SECRET_35}`],
    ["a space", `123456789:${SECRET_35.slice(0, 20)} ${SECRET_35.slice(20)}`],
    ["a slash", `123456789:${SECRET_35}/x`],
    ["a second colon", `123456789:${SECRET_35}:x`],
    ["over 80 characters", `123456789:${"A".repeat(71)}`],
    ["a bot id over 2^54", `${2 ** 54 + 2}:${SECRET_35}`],
    ["not a string", 123456789],
  ])("refuses a token with %s", (_, token) => {
    expect(isBotToken(token)).toBe(false);
  });

  it("states the rule it checks", () => {
    expect(BOT_TOKEN_SHAPE).toBe(
      "<bot id>:<secret> as @BotFather issues it (digits, a colon, then 30 or more of A-Z a-z 0-9 _ -)",
    );
  });

  it("is the rule start() applies to a given token, which it never echoes", async () => {
    const token = "123456:TESTsecretABCdef";
    const refused = await start({ token }).then(
      async (sim) => {
        await sim.close();
        throw new Error("expected start() to refuse the token");
      },
      (error: unknown) => error as Error,
    );
    expect(refused).toBeInstanceOf(RangeError);
    expect(refused.message).toBe(
      `Expected \`bots[0].token\` to be a bot token, ${BOT_TOKEN_SHAPE}; got a string of length 23`,
    );
    expect(refused.message).not.toContain("TESTsecret");
  });
});

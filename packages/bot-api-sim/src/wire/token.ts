// Bot tokens: the format check Telegram's server applies before anything else (401 "invalid
// token specified"), the shape a token given to the simulator must have, and fresh tokens for
// simulated bots.

import { randomBytes } from "node:crypto";

/** Largest bot id the real server accepts in a token (2^54). */
const MAX_BOT_ID = 2 ** 54;
const MAX_TOKEN_LENGTH = 80;

/**
 * The numeric bot id of a well-formed token, or `undefined` when the real server would answer
 * 401 "Unauthorized: invalid token specified": no `:`, a leading `0`, longer than 80 characters,
 * a `/`, or a bot id outside 1…2^54.
 */
export function parseTokenBotId(token: string): number | undefined {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return undefined;
  if (token.startsWith("0") || token.includes("/")) return undefined;
  const colon = token.indexOf(":");
  if (colon <= 0) return undefined;
  const idText = token.slice(0, colon);
  if (!/^[0-9]+$/.test(idText)) return undefined;
  const id = Number(idText);
  if (!Number.isSafeInteger(id) || id < 1 || id > MAX_BOT_ID) return undefined;
  return id;
}

/**
 * How a bot token looks, in words: the rule for a token given to the simulator (the `--token`
 * flag, `start()`'s `token` and `bots[].token`), which telepace's reference bot applies to
 * `TELEGRAM_BOT_TOKEN` too, so a token one accepts the other accepts. `@BotFather` issues a bot id,
 * a colon and 35 characters of `A-Za-z0-9_-` (Telegram's own documentation shows one of 34);
 * 30 or more are accepted so such variations pass, while a truncated paste or a made-up
 * `123:test` is refused.
 */
export const BOT_TOKEN_SHAPE =
  "<bot id>:<secret> as @BotFather issues it (digits, a colon, then 30 or more of A-Z a-z 0-9 _ -)";

const SECRET_PATTERN = /^[A-Za-z0-9_-]{30,}$/;

/**
 * Whether `value` is a token of {@link BOT_TOKEN_SHAPE}: a bot id from 1 to 2^54 without a
 * leading zero, a colon, and a secret of 30 or more `A-Za-z0-9_-`, at most 80 characters in all.
 */
export function isBotToken(value: unknown): boolean {
  if (typeof value !== "string" || parseTokenBotId(value) === undefined) return false;
  return SECRET_PATTERN.test(value.slice(value.indexOf(":") + 1));
}

/** Checks a token given in options or on the command line against {@link BOT_TOKEN_SHAPE}. */
export function checkToken(name: string, token: unknown): string {
  if (typeof token !== "string") {
    throw new TypeError(`Expected \`${name}\` to be a string, got ${String(token)}`);
  }
  if (!isBotToken(token)) {
    // The value itself is never echoed: a token is a secret even when it is malformed.
    throw new RangeError(
      `Expected \`${name}\` to be a bot token, ${BOT_TOKEN_SHAPE}; got a string of length ${token.length}`,
    );
  }
  return token;
}

/** A fresh token for a bot id, with a 35-character secret like Telegram's. */
export function generateToken(botId: number): string {
  const secret = randomBytes(27).toString("base64url").slice(0, 35);
  return `${botId}:${secret}`;
}

/** Replaces every occurrence of the given tokens in `text` with `<token>`. */
export function redactTokens(text: string, tokens: Iterable<string>): string {
  let out = text;
  for (const token of tokens) {
    if (token.length > 0) out = out.split(token).join("<token>");
  }
  return out;
}

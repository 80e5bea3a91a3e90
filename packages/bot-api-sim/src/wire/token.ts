// Bot tokens: the format check Telegram's server applies before anything else (401 "invalid
// token specified"), and fresh tokens for simulated bots.

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
 * Checks a token given in options; the secret part must be non-empty URL-safe characters so
 * the token can sit in a URL path unescaped.
 */
export function checkToken(name: string, token: unknown): string {
  if (typeof token !== "string") {
    throw new TypeError(`Expected \`${name}\` to be a string, got ${String(token)}`);
  }
  const ok = parseTokenBotId(token) !== undefined && /^[0-9]+:[A-Za-z0-9_-]+$/.test(token);
  if (!ok) {
    // The value itself is never echoed: a token is a secret even when it is malformed.
    throw new RangeError(
      `Expected \`${name}\` to look like "<bot id>:<secret>" (digits, a colon, then [A-Za-z0-9_-]), got a string of length ${token.length}`,
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

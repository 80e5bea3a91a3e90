// What a broadcast sends: one Bot API send method and its parameters, the same for every
// recipient (the chat id and, when paid, `allow_paid_broadcast` are added per send), checked once
// and fingerprinted so a resumed broadcast is known to send the same message.

import { createHash } from "node:crypto";
import type { Opts } from "@grammyjs/types";
import { closestName, describeValue } from "@telepace/core";
import type { ChatId } from "@telepace/outbox";

/** The send methods a broadcast can use. */
export const BROADCAST_METHODS = Object.freeze([
  "sendMessage",
  "sendPhoto",
  "sendVideo",
  "sendAnimation",
  "sendAudio",
  "sendDocument",
  "sendVoice",
  "sendVideoNote",
  "sendSticker",
  "sendMediaGroup",
  "sendLocation",
  "sendVenue",
  "sendContact",
  "sendPoll",
  "sendDice",
  "copyMessage",
  "forwardMessage",
] as const);

/** One of {@link BROADCAST_METHODS}. */
export type BroadcastMethod = (typeof BROADCAST_METHODS)[number];

/**
 * The parameters of `M` without the recipient (`chat_id`) and without `allow_paid_broadcast`
 * (the broadcast's `paid` option sets it). Files are strings: a `file_id` (upload the file once,
 * then broadcast its id) or an HTTP URL.
 */
export type BroadcastParams<M extends BroadcastMethod> = Omit<
  Opts<never>[M],
  "chat_id" | "allow_paid_broadcast"
>;

/**
 * A message to broadcast: a send method and its parameters.
 *
 * @example
 * const text: BroadcastMessage = {
 *   method: "sendMessage",
 *   params: { text: "We are live!", reply_markup: { inline_keyboard: [[{ text: "Open", url }]] } },
 * };
 * const copy: BroadcastMessage = {
 *   method: "copyMessage",
 *   params: { from_chat_id: channelId, message_id: 42 },
 * };
 */
export type BroadcastMessage = {
  readonly [M in BroadcastMethod]: { readonly method: M; readonly params: BroadcastParams<M> };
}[BroadcastMethod];

/** A message that was checked: its method, parameters as JSON, and their fingerprint. */
export interface CheckedMessage {
  readonly method: BroadcastMethod;
  readonly params: Readonly<Record<string, unknown>>;
  /** SHA-256 of the method and parameters (keys sorted): the same message, the same fingerprint. */
  readonly fingerprint: string;
}

/** Throws unless `value` is JSON that survives a round trip (what a broadcast can store and send). */
function checkJson(path: string, value: unknown): void {
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return;
  } else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) checkJson(`${path}[${index}]`, item);
    return;
  } else if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [key, item] of Object.entries(value as object)) {
      if (item !== undefined) checkJson(`${path}.${key}`, item);
    }
    return;
  }
  throw new TypeError(
    `Expected \`${path}\` to be JSON (a string, number, boolean, null, array or plain object; files as a file_id or URL), got ${describeValue(value)}`,
  );
}

/** JSON with object keys sorted, so equal messages serialise (and fingerprint) equally. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * Checks a message whole.
 *
 * @throws {TypeError} naming what is wrong: not an object, an unknown method (with the closest
 *   valid one), `chat_id` or `allow_paid_broadcast` among the parameters, or a parameter that is
 *   not JSON.
 */
export function checkMessage(message: unknown): CheckedMessage {
  if (typeof message !== "object" || message === null) {
    throw new TypeError(
      `Expected \`message\` to be an object { method, params }, got ${describeValue(message)}`,
    );
  }
  const { method, params, ...rest } = message as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) {
    const hint = closestName(extra, ["method", "params"]);
    throw new TypeError(
      `Unknown option \`${extra}\` in \`message\`${hint === undefined ? " (expected `method` and `params`)" : ` (did you mean \`${hint}\`?)`}`,
    );
  }
  if (typeof method !== "string" || !(BROADCAST_METHODS as readonly string[]).includes(method)) {
    const hint = typeof method === "string" ? closestName(method, BROADCAST_METHODS) : undefined;
    throw new TypeError(
      `Expected \`message.method\` to be a send method (${BROADCAST_METHODS.join(", ")}), got ${describeValue(method)}${hint === undefined ? "" : ` (did you mean \`${hint}\`?)`}`,
    );
  }
  if (typeof params !== "object" || params === null || Array.isArray(params)) {
    throw new TypeError(
      `Expected \`message.params\` to be an object, got ${describeValue(params)}`,
    );
  }
  for (const owned of ["chat_id", "allow_paid_broadcast"] as const) {
    if (Object.hasOwn(params, owned)) {
      throw new TypeError(
        owned === "chat_id"
          ? "Expected `message.params` without `chat_id`: the broadcast adds each recipient's"
          : "Expected `message.params` without `allow_paid_broadcast`: set the broadcast's `paid` option instead",
      );
    }
  }
  checkJson("message.params", params);
  const fingerprint = createHash("sha256").update(canonical({ method, params })).digest("hex");
  return {
    method: method as BroadcastMethod,
    params: params as Record<string, unknown>,
    fingerprint,
  };
}

/** The payload of one send: the message's parameters to `chatId`, paid when asked. */
export function payloadFor(
  message: CheckedMessage,
  chatId: ChatId,
  paid: boolean,
): Record<string, unknown> {
  return paid
    ? { ...message.params, chat_id: chatId, allow_paid_broadcast: true }
    : { ...message.params, chat_id: chatId };
}

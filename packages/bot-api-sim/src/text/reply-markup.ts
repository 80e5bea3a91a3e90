// reply_markup as Telegram validates it (object or JSON string alike): inline keyboards are kept
// on the message, reply keyboards only recorded; errors carry the real server's wording.

import type {
  ForceReply,
  InlineKeyboardButton,
  InlineKeyboardMarkup,
  KeyboardButton,
  ReplyKeyboardMarkup,
  ReplyKeyboardRemove,
} from "@grammyjs/types";
import { badRequest } from "../wire/api-failure.js";

/** Any reply markup a send method accepts. */
export type AnyReplyMarkup =
  | InlineKeyboardMarkup
  | ReplyKeyboardMarkup
  | ReplyKeyboardRemove
  | ForceReply;

/** Longest callback_data, in bytes. */
const MAX_CALLBACK_DATA_BYTES = 64;

const INLINE_ACTIONS = [
  "url",
  "callback_data",
  "callback_game",
  "pay",
  "switch_inline_query",
  "switch_inline_query_current_chat",
  "switch_inline_query_chosen_chat",
  "login_url",
  "web_app",
  "copy_text",
] as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function inlineButton(value: unknown): InlineKeyboardButton {
  const fail = (text: string): never => {
    throw badRequest(`can't parse inline keyboard button: ${text}`);
  };
  if (!isObject(value)) return fail("InlineKeyboardButton must be an Object");
  if (!("text" in value)) return fail('Can\'t find field "text"');
  if (typeof value.text !== "string") return fail('Field "text" must be of type String');
  const action = INLINE_ACTIONS.find((key) => {
    const field = value[key];
    return field !== undefined && field !== null && field !== "";
  });
  if (action === undefined) return fail("Text buttons are unallowed in the inline keyboard");
  if (action === "callback_data") {
    if (typeof value.callback_data !== "string") {
      return fail('Field "callback_data" must be of type String');
    }
    if (Buffer.byteLength(value.callback_data) > MAX_CALLBACK_DATA_BYTES) {
      throw badRequest("BUTTON_DATA_INVALID");
    }
  }
  if (action === "url" && typeof value.url !== "string") {
    return fail('Field "url" must be of type String');
  }
  return value as unknown as InlineKeyboardButton;
}

function keyboardButton(value: unknown): KeyboardButton {
  if (typeof value === "string") return value;
  if (!isObject(value)) {
    throw badRequest("can't parse keyboard button: KeyboardButton must be a String or an Object");
  }
  if (typeof value.text !== "string") {
    throw badRequest('can\'t parse keyboard button: Field "text" must be of type String');
  }
  return value as unknown as KeyboardButton;
}

function rows<T>(
  value: unknown,
  field: string,
  owner: string,
  parse: (button: unknown) => T,
): T[][] {
  if (!Array.isArray(value)) {
    throw badRequest(`field "${field}" of the ${owner} must be an Array`);
  }
  return value.map((row) => {
    if (!Array.isArray(row)) {
      throw badRequest(`field "${field}" of the ${owner} must be an Array of Arrays`);
    }
    return row.map(parse);
  });
}

function checkBoolean(object: Record<string, unknown>, field: string, owner: string): void {
  if (object[field] !== undefined && typeof object[field] !== "boolean") {
    throw badRequest(`field "${field}" of the ${owner} must be of the type Boolean`);
  }
}

/**
 * Parses the `reply_markup` parameter; `undefined` when absent. Unknown fields are kept, as
 * they are opaque to the simulator.
 */
export function parseReplyMarkup(raw: string | undefined): AnyReplyMarkup | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw badRequest("can't parse reply keyboard markup JSON object");
  }
  if (!isObject(value)) throw badRequest("object expected as reply markup");
  if ("inline_keyboard" in value) {
    const keyboard = rows(
      value.inline_keyboard,
      "inline_keyboard",
      "InlineKeyboardMarkup",
      inlineButton,
    );
    return { inline_keyboard: keyboard };
  }
  if ("keyboard" in value) {
    rows(value.keyboard, "keyboard", "ReplyKeyboardMarkup", keyboardButton);
    checkBoolean(value, "resize_keyboard", "ReplyKeyboardMarkup");
    checkBoolean(value, "one_time_keyboard", "ReplyKeyboardMarkup");
    checkBoolean(value, "is_persistent", "ReplyKeyboardMarkup");
    checkBoolean(value, "selective", "reply markup");
    return value as unknown as ReplyKeyboardMarkup;
  }
  if ("remove_keyboard" in value) {
    checkBoolean(value, "remove_keyboard", "ReplyKeyboardRemove");
    return value as unknown as ReplyKeyboardRemove;
  }
  if ("force_reply" in value) {
    checkBoolean(value, "force_reply", "reply markup");
    return value as unknown as ForceReply;
  }
  // An object with none of the known fields means "no markup" on the real server.
  return undefined;
}

/** The inline keyboard of a markup, the only kind a message carries. */
export function inlineKeyboardOf(
  markup: AnyReplyMarkup | undefined,
): InlineKeyboardMarkup | undefined {
  if (markup === undefined || !("inline_keyboard" in markup)) return undefined;
  return markup.inline_keyboard.length === 0 ? undefined : markup;
}

/** Whether some button of an inline keyboard carries this callback_data. */
export function hasCallbackButton(markup: InlineKeyboardMarkup | undefined, data: string): boolean {
  return (
    markup?.inline_keyboard.some((row) =>
      row.some((button) => "callback_data" in button && button.callback_data === data),
    ) ?? false
  );
}

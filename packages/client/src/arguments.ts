// Call-site checks of the client's arguments: a programming error is a TypeError or RangeError
// thrown synchronously, before anything is queued, never a rejection nobody awaits.

import { checkNumber, checkObject, checkOptions, checkSignal, describeValue } from "@telepace/core";
import type { ChatId } from "@telepace/outbox";
import type { ByteRange } from "./bot-api-http.js";
import { TextTooLongError } from "./errors.js";

/** The keys every per-request options object may have. */
const REQUEST_OPTION_KEYS = ["signal", "timeoutMs"] as const;

/** What is left of a per-request options object once checked. */
export interface CheckedRequestOptions {
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number | undefined;
  /** The object itself, for the keys a method adds (`replaceMessageId`, `range`, …). */
  readonly given: Readonly<Record<string, unknown>>;
}

/**
 * Checks a per-request options object whole: an object (or `undefined`), no unknown key,
 * `signal` an `AbortSignal`, `timeoutMs` a number >= 0.
 */
export function checkRequestOptions(
  value: unknown,
  extraKeys: readonly string[] = [],
): CheckedRequestOptions {
  const given = checkOptions("options", value, [...REQUEST_OPTION_KEYS, ...extraKeys]);
  const signal = checkSignal("signal", given.signal);
  const timeoutMs =
    given.timeoutMs === undefined
      ? undefined
      : checkNumber("timeoutMs", given.timeoutMs, { min: 0 });
  return { signal, timeoutMs, given };
}

/** A chat id: an integer or a non-empty string (`@username`); never `undefined`, `null` or `""`. */
export function checkChatId(value: unknown, name = "chatId"): ChatId {
  if (typeof value === "number") {
    if (Number.isSafeInteger(value)) return value;
    throw new RangeError(
      `Expected \`${name}\` to be an integer or a non-empty string, got ${value}`,
    );
  }
  if (typeof value === "string" && value.length > 0) return value;
  throw new TypeError(
    `Expected \`${name}\` to be an integer or a non-empty string, got ${describeValue(value)}`,
  );
}

/** A message id: an integer >= 1. */
export function checkMessageId(value: unknown, name = "messageId"): number {
  return checkNumber(name, value, { integer: true, min: 1 });
}

/** A non-empty string argument (a callback query id, a file id, a method name). */
export function checkNonEmptyString(name: string, value: unknown): string {
  if (typeof value === "string" && value.length > 0) return value;
  throw new TypeError(`Expected \`${name}\` to be a non-empty string, got ${describeValue(value)}`);
}

/** Method parameters: an object, or `undefined` for none. */
export function checkParams(value: unknown, name = "params"): Readonly<Record<string, unknown>> {
  return value === undefined ? {} : checkObject(name, value);
}

/** Text limits of the Bot API, in UTF-16 code units. */
export const TEXT_LIMIT = 4096;
export const CAPTION_LIMIT = 1024;

/**
 * A message text or caption. Without `parse_mode` the length is checked here; with it the limit
 * applies after markup is removed, which only Telegram can count.
 */
export function checkText(
  field: "text" | "caption",
  value: unknown,
  limit: number,
  parseMode: unknown,
): void {
  if (value === undefined && field === "caption") return;
  if (typeof value !== "string") {
    throw new TypeError(`Expected \`${field}\` to be a string, got ${describeValue(value)}`);
  }
  if (field === "text" && value.length === 0) {
    throw new RangeError("Expected `text` to be a non-empty string");
  }
  if (parseMode === undefined && value.length > limit) {
    throw new TextTooLongError(field, value.length, limit);
  }
}

/** A download's byte range, when given: integers, `start` >= 0, `end` (optional) >= `start`. */
export function checkByteRange(value: unknown): ByteRange | undefined {
  if (value === undefined) return undefined;
  const range = checkOptions("range", value, ["start", "end"]) as Partial<ByteRange>;
  const start = checkNumber("range.start", range.start, { integer: true, min: 0 });
  if (range.end !== undefined) checkNumber("range.end", range.end, { integer: true, min: start });
  return value as ByteRange;
}

// The replace-progress marker: a symbol-keyed field a send carries through grammY's payload to the
// transformer. JSON and multipart encoding skip symbol keys, so it never reaches Telegram.

import { checkNumber } from "@telepace/core";

/** The key of the marker (a symbol: never serialised, never clashes with a Bot API field). */
export const REPLACES_PROGRESS: unique symbol = Symbol("telepace.replacesProgress");

/**
 * Spread into a send's `other` parameter: the send replaces that progress message. The field
 * `disable_notification?: never` is never set; it only makes TypeScript accept the marker alone as
 * the `other` of a send (every send has that option, and grammY's `other` types have only optional
 * fields) and refuse it on methods that are no sends.
 */
export interface ReplacingProgress {
  readonly [REPLACES_PROGRESS]: number;
  readonly disable_notification?: never;
}

/**
 * Marks a send as the final message that replaces a progress message: spread it into the call's
 * `other` parameter. The send goes out at top priority, the progress message's pending edits are
 * dropped, and the progress message is deleted only after the send was delivered (if the send
 * fails, it stays). Needs the {@link telepace} transformer on the API that makes the call.
 *
 * @throws {TypeError|RangeError} when `progressMessageId` is not a positive integer.
 *
 * @example
 * await ctx.reply("Done: 42 files.", { ...replacing(progress.message_id), parse_mode: "HTML" });
 */
export function replacing(progressMessageId: number): ReplacingProgress {
  checkNumber("progressMessageId", progressMessageId, { integer: true, min: 1 });
  return Object.freeze({ [REPLACES_PROGRESS]: progressMessageId });
}

/** The progress message a payload replaces, if it carries the marker. */
export function replacedMessageOf(payload: object): number | undefined {
  const value: unknown = (payload as Partial<ReplacingProgress>)[REPLACES_PROGRESS];
  return typeof value === "number" ? value : undefined;
}

/** The payload without the marker, as it goes to the network. */
export function withoutMarker(payload: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { [REPLACES_PROGRESS]: _marker, ...rest } = payload as Record<string | symbol, unknown>;
  return rest as Record<string, unknown>;
}

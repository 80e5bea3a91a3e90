// replaceProgress(): the final message of a job that showed progress in another message, as one
// call on a grammY Api that has the telepace transformer installed.

import type { Api } from "grammy";
import type { Message } from "grammy/types";
import { replacing } from "./progress-marker.js";
import { isTelepaceTransformer } from "./telepace-marker.js";

/** The `other` parameter of `api.sendMessage`. */
export type SendMessageOther = NonNullable<Parameters<Api["sendMessage"]>[2]>;
/** The signal parameter of grammY's API methods (typed with its `abort-controller` shim). */
export type GrammySignal = NonNullable<Parameters<Api["sendMessage"]>[3]>;

/**
 * Sends `text` as the final message that replaces the progress message `progressMessageId`:
 * its pending edits are dropped, the send goes out at top priority, and once it was delivered the
 * progress message is deleted (in the background; the returned promise resolves with the sent
 * message and does not wait for the delete). If the send fails, the progress message stays.
 *
 * @throws {TypeError} (rejects) when `api` does not have the {@link telepace} transformer.
 *
 * @example
 * const progress = await ctx.reply("Working… 0%");
 * await ctx.api.editMessageText(ctx.chat.id, progress.message_id, "Working… 50%");
 * await replaceProgress(ctx.api, ctx.chat.id, progress.message_id, "Done.");
 */
export async function replaceProgress(
  api: Api,
  chatId: number | string,
  progressMessageId: number,
  text: string,
  other?: SendMessageOther,
  signal?: GrammySignal,
): Promise<Message.TextMessage> {
  if (!api.config.installedTransformers().some(isTelepaceTransformer)) {
    throw new TypeError(
      "replaceProgress() needs the telepace transformer on this Api: api.config.use(telepace())",
    );
  }
  return api.sendMessage(chatId, text, { ...other, ...replacing(progressMessageId) }, signal);
}

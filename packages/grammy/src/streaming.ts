// Streamed replies for grammY: `ctx.replyWithStream(source)` streams into the update's chat
// through the transformer's `StreamRegistry`, and the same middleware routes Stop presses
// (`stopped_message_generation`) to their streams before anything else sees them.

import type {
  MessageStream,
  StreamMessageOptions,
  StreamRegistry,
  StreamSource,
} from "@telepace/outbox";
import type { Api, Context, MiddlewareFn } from "grammy";

/**
 * The context flavor {@link TelepaceTransformer.middleware} installs:
 * `type MyContext = Context & StreamFlavor`.
 */
export interface StreamFlavor {
  /**
   * Streams a reply into this update's chat as it is generated: `sendMessageDraft` frames in a
   * private chat (ending in a real message), a progress message with coalesced edits in groups.
   * A source given as a function gets the stream's signal, which aborts when the person presses
   * Stop (`canStop: true`). In a forum topic the reply goes to the topic. Await `stream.result`.
   *
   * @throws {TypeError} when the update has no chat, or for an invalid source or option.
   */
  replyWithStream(source: StreamSource, options?: StreamMessageOptions): MessageStream;
}

/** The params a reply in this context carries: the topic of a topic message. */
function replyParamsOf(
  ctx: Context,
  options: StreamMessageOptions | undefined,
): StreamMessageOptions | undefined {
  const thread = ctx.msg?.is_topic_message === true ? ctx.msg.message_thread_id : undefined;
  if (
    thread === undefined ||
    (options?.params !== undefined && "message_thread_id" in options.params)
  ) {
    return options;
  }
  return { ...options, params: { message_thread_id: thread, ...options?.params } };
}

/**
 * The middleware of {@link TelepaceTransformer.middleware}; `bind` lets the transformer learn the
 * API it wraps from `ctx.api` when no call went through it yet.
 */
export function streamMiddleware(
  streams: StreamRegistry,
  bind: (api: Api) => Promise<void>,
): MiddlewareFn<Context & StreamFlavor> {
  return async (ctx, next) => {
    if (streams.handleUpdate(ctx.update)) return;
    await bind(ctx.api);
    ctx.replyWithStream = (source, options) => {
      const chat = ctx.chat;
      if (chat === undefined) {
        throw new TypeError(
          `replyWithStream: this update (${Object.keys(ctx.update).join(", ")}) has no chat`,
        );
      }
      return streams.pipe(chat.id, source, replyParamsOf(ctx, options));
    };
    await next();
  };
}

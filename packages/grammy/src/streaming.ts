// Streamed replies for grammY: `ctx.replyWithStream(source)` streams into the update's chat
// through the transformer's `StreamRegistry`, and the same middleware lets Stop presses
// (`stopped_message_generation`) for its streams go no further.

import type { StreamMessageOptions, StreamRegistry, StreamSource } from "@telepace/outbox";
import type { Context, MiddlewareFn } from "grammy";
import { type ReplyStream, replyWithStream } from "./reply-stream.js";
import type { StopRouter } from "./stop-router.js";

/**
 * The context flavor {@link TelepaceTransformer.middleware} installs:
 * `type MyContext = Context & StreamFlavor`.
 */
export interface StreamFlavor {
  /**
   * Streams a reply into this update's chat as it is generated: `sendMessageDraft` frames in a
   * private chat (ending in a real message), a progress message with coalesced edits in groups.
   * A source given as a function gets the stream's signal, which aborts when the person presses
   * Stop (`canStop: true`). In a forum topic the reply goes to the topic.
   *
   * `await ctx.replyWithStream(source)` waits until the stream has ended and resolves with its
   * messages (as `@grammyjs/stream` does), or rejects as `ctx.reply` would; `.result` is the
   * whole outcome. Inside a `@grammyjs/conversations` conversation the stream runs once: a
   * replay gets its recorded outcome.
   *
   * @throws {TypeError} when the update has no chat, or for an invalid source or option.
   */
  replyWithStream(source: StreamSource, options?: StreamMessageOptions): ReplyStream;
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

/** @grammyjs/stream's call shapes get a TypeError saying where their parts go here. */
function checkPeerCall(options: unknown, extra: readonly unknown[]): void {
  if (extra.length > 0) {
    throw new TypeError(
      "replyWithStream(source, options) takes two arguments: put sendMessage parameters in `options.params` and a signal in `options.signal`",
    );
  }
  if (typeof options !== "object" || options === null) return;
  for (const key of Object.keys(options)) {
    if (key === "parse_mode") {
      throw new TypeError("Unknown option `parse_mode` in `options` (use `parseMode`)");
    }
    if (key.includes("_")) {
      throw new TypeError(
        `Unknown option \`${key}\` in \`options\` (a Bot API parameter: put it in \`params\`)`,
      );
    }
  }
}

/**
 * The middleware of {@link TelepaceTransformer.middleware}; `prepare` makes sure `ctx.api` goes
 * through the transformer (and lets it learn the API it wraps when no call went through it yet).
 */
export function streamMiddleware(
  streams: StreamRegistry,
  stops: StopRouter,
  prepare: (ctx: Context) => void,
): MiddlewareFn<Context & StreamFlavor> {
  return async (ctx, next) => {
    if (stops.consume(ctx.update)) return;
    prepare(ctx);
    ctx.replyWithStream = (source, options, ...extra: unknown[]) => {
      checkPeerCall(options, extra);
      const chat = ctx.chat;
      if (chat === undefined) {
        throw new TypeError(
          `replyWithStream: this update (${Object.keys(ctx.update).join(", ")}) has no chat`,
        );
      }
      return replyWithStream(ctx.api, streams, chat.id, source, replyParamsOf(ctx, options));
    };
    await next();
  };
}

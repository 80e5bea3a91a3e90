// telepace(): the outbox as a grammY API transformer. Every write goes through one TelegramOutbox
// (classified by method, failures turned into what the outbox understands); reads pass straight
// through; the outcome goes back to grammY as the envelope it expects.

import {
  type OutboxCloseOptions,
  type OutboxSnapshot,
  planWrite,
  replacingProgress,
  StreamRegistry,
  TelegramOutbox,
  type TelegramOutboxOptions,
  writeOperation,
} from "@telepace/outbox";
import type { Api, Context, MiddlewareFn, Transformer } from "grammy";
import { bridgeSignal } from "./abort-bridge.js";
import { ApiFailure, type FailedEnvelope, networkFailureOf } from "./failures.js";
import { type Envelope, responseOf } from "./outcome-response.js";
import { checkPeerOptions } from "./peer-options.js";
import { replacedMessageOf, withoutMarker } from "./progress-marker.js";
import { type StreamFlavor, streamMiddleware } from "./streaming.js";

/** Options of {@link telepace}: those of the outbox underneath. */
export interface TelepaceOptions extends TelegramOutboxOptions {}

/**
 * A grammY transformer (install it with `bot.api.config.use(…)`) that owns a
 * `TelegramOutbox` (`@telepace/outbox`).
 */
export interface TelepaceTransformer extends Transformer, AsyncDisposable {
  /** The outbox every write goes through. */
  readonly outbox: TelegramOutbox;
  /**
   * Streamed messages over the outbox; each request is one attempt through the API this
   * transformer is installed on. Prefer `ctx.replyWithStream` ({@link middleware}); pass updates
   * the middleware does not see to `streams.handleUpdate(update)` so Stop presses reach streams.
   */
  readonly streams: StreamRegistry;
  /**
   * Middleware that routes Stop presses (`stopped_message_generation`) to their streams (those
   * updates go no further) and adds `ctx.replyWithStream` ({@link StreamFlavor}). Install it
   * first: `bot.use(pace.middleware())`.
   */
  middleware(): MiddlewareFn<Context & StreamFlavor>;
  /** The outbox's live state: pending and in-flight ops, per-chat pacing and freezes, counters. */
  snapshot(): OutboxSnapshot;
  /**
   * Closes the outbox: by default it drains (pending writes keep going out) within `timeoutMs`
   * (10 s). Calls made afterwards reject with `ERR_OUTBOX_CLOSED`; reads still pass.
   */
  close(options?: OutboxCloseOptions): Promise<void>;
}

type Prev = (
  method: string,
  payload: Record<string, unknown>,
  signal?: unknown,
) => Promise<Envelope>;

// Names grammY users bring from transformer-throttler and auto-retry, and what replaces them.
const PEER_OPTIONS: Readonly<Record<string, string>> = Object.freeze({
  global: "`globalRps` (telepace paces per chat and in total by itself)",
  group: "`groupChatRps` and `groupBurst` (telepace paces per chat by itself)",
  out: "`privateChatRps` (telepace paces per chat by itself)",
  rethrowInternalServerErrors:
    "`classifyFailure` (5xx are retried only where a repeat cannot duplicate a message)",
  rethrowHttpErrors:
    "`classifyFailure` (network errors are retried only where a repeat cannot duplicate a message)",
});

const installed = new WeakSet<object>();

// Marks a stream's request sent through the API the middleware saw, before any call of its own
// went through this transformer (a webhook bot given its botInfo, whose first write is a stream):
// the transformer makes it without the outbox (the stream scheduled it already) and learns from
// it the API it wraps. A symbol key, so it is never serialised.
const STREAM_ATTEMPT: unique symbol = Symbol("telepace.streamAttempt");

type RawCall = (payload: object, signal: AbortSignal) => Promise<unknown>;

/** Whether `transformer` was made by {@link telepace}. */
export function isTelepaceTransformer(transformer: unknown): boolean {
  return typeof transformer === "function" && installed.has(transformer);
}

function attempt(
  prev: Prev,
  method: string,
  payload: Record<string, unknown>,
): (signal: AbortSignal) => Promise<Extract<Envelope, { ok: true }>> {
  return async (signal) => {
    let response: Envelope;
    try {
      response = await prev(method, payload, signal);
    } catch (error) {
      throw networkFailureOf(method, error);
    }
    if (response.ok) return response;
    throw new ApiFailure(method, response as FailedEnvelope);
  };
}

/**
 * Makes the transformer that replaces transformer-throttler and auto-retry: every Bot API write
 * goes through a `TelegramOutbox` (`@telepace/outbox`) — paced per chat under a global budget,
 * edits coalesced per message, deletes dropping their message's pending edits, 429s freezing only
 * their chat, 5xx and network failures retried where a repeat cannot duplicate a message. Reads
 * (getUpdates, getMe, getFile, getChat…) pass straight through.
 *
 * Answers are what grammY expects: the envelope (an API failure becomes the usual `GrammyError`),
 * `true` for an edit that changed nothing or was replaced by a newer one, the original
 * `HttpError` for a network failure that was not retried.
 *
 * @throws {TypeError|RangeError} naming the option, when an option is invalid.
 *
 * @example
 * const pace = telepace();
 * bot.api.config.use(pace);
 * // … on shutdown:
 * await pace.close();
 */
export function telepace(options?: TelepaceOptions): TelepaceTransformer {
  checkPeerOptions(options, PEER_OPTIONS);
  const outbox = new TelegramOutbox(options);
  // The API this transformer wraps, as of its latest call: streams make their attempts through it.
  let latestPrev: Prev | undefined;
  // An API with this transformer that the middleware saw, for streams before the first call.
  let seenApi: Api | undefined;
  const streams = new StreamRegistry({
    outbox,
    clock: options?.clock,
    transport: async (method, params, signal) => {
      if (latestPrev !== undefined)
        return (await attempt(latestPrev, method, params)(signal)).result;
      if (seenApi === undefined) {
        throw new Error(
          "telepace: streams go through the API the transformer is installed on; install it with bot.api.config.use(pace)",
        );
      }
      const raw = seenApi.raw as unknown as Record<string, RawCall>;
      return (raw[method] as RawCall)({ ...params, [STREAM_ATTEMPT]: true }, signal);
    },
  });

  const transform = async (
    prev: Prev,
    method: string,
    payload: Record<string, unknown>,
    signal?: unknown,
  ): Promise<Envelope> => {
    latestPrev = prev;
    const given = payload ?? {};
    if (STREAM_ATTEMPT in given) {
      const { [STREAM_ATTEMPT]: _marker, ...body } = given as Record<string | symbol, unknown>;
      return attempt(prev, method, body as Record<string, unknown>)(signal as AbortSignal);
    }
    const plan = planWrite(method, given);
    const replaced = replacedMessageOf(given);
    if (plan === undefined) return prev(method, given, signal);
    if (replaced !== undefined && plan.methodClass !== "send") {
      throw new TypeError(`replacing() marks a send; ${method} is not one`);
    }
    const body = replaced === undefined ? given : withoutMarker(given);
    const op = writeOperation(plan, attempt(prev, method, body));
    // Only a delivered final deletes the progress message; the caller does not wait for it.
    const scheduled =
      replaced === undefined
        ? op
        : replacingProgress(
            op,
            replaced,
            attempt(prev, "deleteMessage", { chat_id: body.chat_id, message_id: replaced }),
          );
    const bridged = bridgeSignal(signal);
    try {
      return responseOf(await outbox.enqueue(scheduled, { signal: bridged.signal }));
    } finally {
      bridged.dispose();
    }
  };

  const bindStreams = async (api: Api): Promise<void> => {
    if (api.config.installedTransformers().includes(transformer)) seenApi = api;
  };
  const middleware = streamMiddleware(streams, bindStreams);
  const transformer = Object.assign(transform as unknown as Transformer, {
    outbox,
    streams,
    middleware: () => middleware,
    snapshot: () => outbox.snapshot(),
    close: (closeOptions?: OutboxCloseOptions) => outbox.close(closeOptions),
    [Symbol.asyncDispose]: () => outbox.close(),
  });
  installed.add(transformer);
  return transformer;
}

// telepace(): the outbox as a grammY API transformer. Every write goes through one TelegramOutbox
// (classified by method, failures turned into what the outbox understands); reads pass straight
// through; the outcome goes back to grammY as the envelope it expects.

import { systemClock } from "@telepace/core";
import {
  type OutboxCloseOptions,
  type OutboxOutcome,
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
import { adoptTransformer } from "./context-api.js";
import { ApiFailure, type FailedEnvelope, networkFailureOf } from "./failures.js";
import {
  checkMaybeDelivered,
  type MaybeDeliveredPolicy,
  resending,
  resolvesAsUnknown,
} from "./maybe-delivered.js";
import { type Envelope, responseOf } from "./outcome-response.js";
import { checkPeerOptions } from "./peer-options.js";
import { replacedMessageOf, withoutMarker } from "./progress-marker.js";
import { isStreamCall } from "./reply-stream.js";
import { StopPoller } from "./stop-poller.js";
import { StopRouter } from "./stop-router.js";
import { type StreamFlavor, streamMiddleware } from "./streaming.js";
import { markTelepace } from "./telepace-marker.js";

/**
 * Options of {@link telepace}: those of the outbox underneath, and what a write that may have
 * been delivered becomes.
 */
export interface TelepaceOptions extends TelegramOutboxOptions {
  /**
   * A write that may have reached Telegram but was not confirmed (a 5xx, a connection lost after
   * sending; the Bot API has no idempotency key): `"throw"` rejects and never sends it again
   * (no silent duplicate, but a handler without try/catch stops there), `"resend"` sends it again
   * as auto-retry does (the handler goes on; it may show twice), `"resolve"` resolves `true`,
   * "delivery unknown" (the handler goes on; it may be missing). Edits, deletes and chat actions
   * are retried whatever this says: a repeat of those changes nothing.
   * @defaultValue "throw"
   */
  readonly maybeDelivered?: MaybeDeliveredPolicy | undefined;
}

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
   * Middleware that adds `ctx.replyWithStream` ({@link StreamFlavor}) and lets Stop presses
   * (`stopped_message_generation`) for its streams go no further. Install it first:
   * `bot.use(pace.middleware())`. The press itself stops its stream as soon as the transformer
   * sees it in a getUpdates answer (or `webhookCallback` takes it), before any handler runs.
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
    '`maybeDelivered` ("throw", "resend" or "resolve": what a send that may have arrived becomes)',
  rethrowHttpErrors:
    '`maybeDelivered` ("throw", "resend" or "resolve": what a send that may have arrived becomes)',
});

// Marks a stream's request sent through the API the middleware saw, before any call of its own
// went through this transformer (a webhook bot given its botInfo, whose first write is a stream):
// the transformer makes it without the outbox (the stream scheduled it already) and learns from
// it the API it wraps. A symbol key, so it is never serialised.
const STREAM_ATTEMPT: unique symbol = Symbol("telepace.streamAttempt");

type RawCall = (payload: object, signal: AbortSignal) => Promise<unknown>;

/** The ids of the messages a delivered send put in its chat (several for an album). */
function sentMessageIds(outcome: OutboxOutcome<unknown>): number[] {
  if (outcome.status !== "delivered" || outcome.notModified) return [];
  const result = (outcome.result as { result?: unknown } | undefined)?.result;
  const messages = Array.isArray(result) ? result : [result];
  return messages.flatMap((message) => {
    const id = (message as { message_id?: unknown } | null)?.message_id;
    return typeof id === "number" ? [id] : [];
  });
}

// "Delivery unknown", as the `resolve` policy answers a write that may have arrived.
const DELIVERY_UNKNOWN: Envelope = Object.freeze({ ok: true, result: true });

/** The outbox's options, and the policy for maybe-delivered writes (with `resend` built in). */
function splitOptions(options: unknown): {
  policy: MaybeDeliveredPolicy;
  outboxOptions: unknown;
} {
  if (typeof options !== "object" || options === null) {
    return { policy: "throw", outboxOptions: options };
  }
  const { maybeDelivered, ...rest } = options as TelepaceOptions;
  const policy = checkMaybeDelivered(maybeDelivered);
  if (policy !== "resend") return { policy, outboxOptions: rest };
  if (rest.classifyFailure !== undefined && typeof rest.classifyFailure !== "function") {
    return { policy, outboxOptions: rest }; // the outbox names the bad classifier
  }
  return { policy, outboxOptions: { ...rest, classifyFailure: resending(rest.classifyFailure) } };
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
  const { policy, outboxOptions } = splitOptions(options);
  const outbox = new TelegramOutbox(outboxOptions as TelegramOutboxOptions | undefined);
  // The API this transformer wraps, as of its latest call: streams make their attempts through it.
  let latestPrev: Prev | undefined;
  // An API with this transformer that the middleware saw, for streams before the first call.
  let seenApi: Api | undefined;
  const streams = new StreamRegistry({
    outbox,
    clock: options?.clock,
    transport: async (method, params, signal) => {
      poller.wake(); // a stream with a Stop button runs: Stop presses must reach it
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

  const stops = new StopRouter(streams);
  const poller = new StopPoller(stops, streams, options?.clock ?? systemClock);

  const transform = async (
    prev: Prev,
    method: string,
    payload: Record<string, unknown>,
    signal?: unknown,
  ): Promise<Envelope> => {
    // A whole ctx.replyWithStream on its way through the chain: not a request, and its `prev`
    // leads to the stream rather than to Telegram, so it is not the API streams should use.
    if (isStreamCall(method)) return prev(method, payload, signal);
    latestPrev = prev;
    const given = payload ?? {};
    if (STREAM_ATTEMPT in given) {
      const { [STREAM_ATTEMPT]: _marker, ...body } = given as Record<string | symbol, unknown>;
      return attempt(prev, method, body as Record<string, unknown>)(signal as AbortSignal);
    }
    const plan = planWrite(method, given);
    const replaced = replacedMessageOf(given);
    if (plan === undefined) {
      if (method === "getUpdates") return poller.getUpdates(prev, given, signal);
      return prev(method, given, signal);
    }
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
    // A delete (or a replacing send) of a stream's progress message drops the edit it holds.
    streams.noteWrite(scheduled);
    const bridged = bridgeSignal(signal);
    try {
      const outcome = await outbox.enqueue(scheduled, { signal: bridged.signal });
      // A stream in this chat finishes in its progress message only while nothing is newer.
      if (plan.methodClass === "send" && plan.chatId !== undefined) {
        for (const id of sentMessageIds(outcome)) streams.noteMessage(plan.chatId, id);
      }
      return resolvesAsUnknown(policy, outcome) ? DELIVERY_UNKNOWN : responseOf(outcome);
    } finally {
      bridged.dispose();
    }
  };

  // The context's Api has this transformer (learnt for streams before any call), or gets it.
  const prepare = (ctx: Context): void => {
    if (!adoptTransformer(ctx, transformer)) seenApi = ctx.api;
  };
  const middleware = streamMiddleware(streams, stops, prepare);
  const transformer = Object.assign(transform as unknown as Transformer, {
    outbox,
    streams,
    middleware: () => middleware,
    snapshot: () => outbox.snapshot(),
    close: (closeOptions?: OutboxCloseOptions) => outbox.close(closeOptions),
    [Symbol.asyncDispose]: () => outbox.close(),
  });
  markTelepace(transformer, stops);
  return transformer;
}

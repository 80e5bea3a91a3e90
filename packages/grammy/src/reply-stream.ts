// ctx.replyWithStream as grammY users await it: a Promise of the messages that settles when the
// stream has ended (as `@grammyjs/stream`'s does), with the whole outcome as `result`. The stream
// is one call through `ctx.api`'s transformers, so a plugin that records and replays API calls
// (`@grammyjs/conversations`) records the whole stream once and replays its outcome.

import type {
  StreamMessageOptions,
  StreamOutcome,
  StreamOutcomeBase,
  StreamRegistry,
  StreamSource,
} from "@telepace/outbox";
import { OutboxError } from "@telepace/outbox";
import type { Api } from "grammy";
import type { Message } from "grammy/types";
import { ApiFailure, type FailedEnvelope, grammyErrorOf, grammyFailureOf } from "./failures.js";
import { isTelepaceTransformer } from "./telepace-marker.js";

/**
 * What `ctx.replyWithStream` returns: awaiting it resolves with the messages now in the chat once
 * the stream has ended (none for a text with nothing to show), or rejects as `ctx.reply` would
 * (`GrammyError`, `HttpError`, `OutboxError` `ERR_OUTBOX_CLOSED`, your signal's reason).
 */
export interface ReplyStream extends Promise<Message.TextMessage[]> {
  /**
   * The outcome (`delivered`, `empty`, `failed`, `closed`), which never rejects except with the
   * reason of your `signal`.
   */
  readonly result: Promise<StreamOutcome>;
}

/**
 * The method name a whole stream passes `ctx.api`'s transformers under. The telepace transformer
 * hands it on untouched; it never reaches the network.
 */
export const STREAM_CALL = "telepace:replyWithStream";

type Call = (
  method: string,
  payload: Record<string, unknown>,
  signal?: unknown,
) => Promise<unknown>;

/** An outcome as a recording plugin may store it: JSON, with its error reduced to the envelope. */
interface StreamRecord {
  readonly outcome: Omit<StreamOutcomeBase, "sourceError"> & {
    readonly status: StreamOutcome["status"];
    readonly maybeDelivered?: boolean;
    readonly error?: { readonly method?: string; readonly envelope?: FailedEnvelope };
  };
}

function recordOf(outcome: StreamOutcome): StreamRecord {
  const { sourceError: _source, ...rest } = outcome;
  if (rest.status !== "failed") return { outcome: rest };
  const envelope = grammyFailureOf(rest.error);
  const failure = findApiFailure(rest.error);
  return {
    outcome: {
      ...rest,
      error: {
        ...(failure === undefined ? {} : { method: failure.method }),
        ...(envelope === undefined || envelope instanceof Error ? {} : { envelope }),
      },
    },
  };
}

function findApiFailure(error: unknown): ApiFailure | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if (current instanceof ApiFailure) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A recorded outcome back, as a replay sees it. */
function outcomeOf(record: StreamRecord): StreamOutcome {
  const { error, maybeDelivered, status, ...base } = record.outcome;
  if (status !== "failed") return { ...base, status };
  const replayed =
    error?.envelope === undefined
      ? new Error("The stream failed (its error is not kept across a replay)")
      : new ApiFailure(error.method ?? "sendMessage", error.envelope);
  return { ...base, status, error: replayed, maybeDelivered: maybeDelivered ?? false };
}

/**
 * The transformers of `api` a handler's call passes before it reaches the telepace transformer
 * (those installed after it; all of them on an Api without it, a conversation's), over `base`.
 * The ones below it see the stream's own requests, as they see every request it makes.
 */
function aboveTelepace(api: Api, base: Call): Call {
  const transformers = api.config.installedTransformers();
  const telepace = transformers.findLastIndex(isTelepaceTransformer);
  return transformers
    .slice(telepace + 1)
    .reduce<Call>(
      (prev, transformer) => (method, payload, signal) =>
        (transformer as unknown as (prev: Call, ...args: unknown[]) => Promise<unknown>)(
          prev,
          method,
          payload,
          signal,
        ),
      base,
    );
}

function messagesOf(outcome: StreamOutcome): Message.TextMessage[] {
  switch (outcome.status) {
    case "delivered":
    case "empty":
      return [...outcome.messages];
    case "failed":
      throw grammyErrorOf(outcome.error);
    case "closed":
      throw new OutboxError("ERR_OUTBOX_CLOSED", "The outbox closed before the stream ended");
  }
}

/**
 * Streams `source` into `chatId` as one call through `api`'s transformers (see the file's head).
 * Checks its arguments at once; the stream opens when the call reaches its end.
 *
 * @throws {TypeError|RangeError} for an invalid chat id, source or option.
 */
export function replyWithStream(
  api: Api,
  streams: StreamRegistry,
  chatId: number,
  source: StreamSource,
  options: StreamMessageOptions | undefined,
): ReplyStream {
  streams.validate(chatId, source, options);
  // Set when the stream ran in this process now (not replayed): its outcome with real errors.
  let live: { readonly outcome: StreamOutcome } | { readonly aborted: unknown } | undefined;
  const run: Call = async () => {
    try {
      const outcome = await streams.pipe(chatId, source, options).result;
      live = { outcome };
      return { ok: true, result: recordOf(outcome) };
    } catch (reason) {
      live = { aborted: reason };
      return { ok: true, result: { aborted: true } };
    }
  };
  const call = aboveTelepace(api, run);
  const result = call(STREAM_CALL, {}).then((response): StreamOutcome => {
    if (live !== undefined) {
      if ("aborted" in live) throw live.aborted;
      return live.outcome;
    }
    // Replayed: the recorded answer, as a recording transformer (a conversation's) kept it.
    const recorded = (response as { result?: unknown } | undefined)?.result;
    if (typeof recorded !== "object" || recorded === null) {
      throw new TypeError(
        `A transformer above telepace answered ${STREAM_CALL} itself, so nothing was streamed`,
      );
    }
    if ("aborted" in recorded) throw new DOMException("The stream was aborted", "AbortError");
    return outcomeOf(recorded as StreamRecord);
  });
  const messages = result.then(messagesOf);
  // A caller may await either promise alone; the other must not be an unhandled rejection.
  result.catch(() => {});
  messages.catch(() => {});
  return Object.assign(messages, { result });
}

/** The transformer's side of {@link STREAM_CALL}: whether a call is a whole stream passing. */
export function isStreamCall(method: string): boolean {
  return method === STREAM_CALL;
}

// The streams of one bot: opens them over an outbox and a transport, hands out draft ids, routes
// a Stop press (`stopped_message_generation`) to its stream, and remembers where drafts are refused.

import type { MessageEntity, Update } from "@grammyjs/types";
import { describeValue } from "@telepace/core";
import { type ChatId, chatKeyOf } from "../chat.js";
import type { WritePlan } from "../writes/write-plan.js";
import { type LearnedDraftPace, relaxedSpacingMs } from "./draft-pacer.js";
import { LatestMessages } from "./latest-messages.js";
import { MessageStream } from "./message-stream.js";
import type { StreamHost } from "./stream-host.js";
import {
  type ResolvedRegistryOptions,
  resolveRegistryOptions,
  resolveStreamOptions,
  type StreamMessageOptions,
  type StreamRegistryOptions,
  streamDefaults,
} from "./stream-options.js";

/**
 * A piece of streamed text: a string, or text with its entities (offsets counted from the start
 * of the whole stream, as `@grammyjs/stream`'s pieces have them).
 */
export type StreamPiece =
  | string
  | { readonly text: string; readonly entities?: readonly MessageEntity[] | undefined };

/** Text to stream: an async iterable of pieces (appended), or a function given the stop signal. */
export type StreamSource =
  | AsyncIterable<StreamPiece>
  | Iterable<StreamPiece>
  | ((signal: AbortSignal) => AsyncIterable<StreamPiece> | Iterable<StreamPiece>);

/** Appends one piece; false once the stream is ending. A piece of another shape throws. */
function appendPiece(stream: MessageStream, piece: unknown, entities: MessageEntity[]): boolean {
  if (typeof piece === "string") return stream.append(piece);
  const text = (piece as { text?: unknown } | null)?.text;
  if (typeof text !== "string") {
    throw new TypeError(
      `Expected each piece of \`source\` to be a string or { text, entities? }, got ${describeValue(piece)}`,
    );
  }
  const given = (piece as { entities?: unknown }).entities;
  if (given === undefined) return stream.append(text);
  if (!Array.isArray(given)) {
    throw new TypeError(
      `Expected \`entities\` of a piece to be an array, got ${describeValue(given)}`,
    );
  }
  entities.push(...(given as MessageEntity[]));
  return stream.replace(stream.text + text, { entities: [...entities] });
}

/** Sets `key` as the newest entry of `map`, forgetting the oldest past `max`. */
function remember<T>(map: Map<string, T>, key: string, value: T, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
}

/** Live counts of a registry. */
export interface StreamRegistrySnapshot {
  /** Streams not yet ended. */
  readonly active: number;
  /** Of those, the ones showing a Stop button now (drafts of a stream opened with `canStop`). */
  readonly stoppable: number;
  /** Chats where a 429 taught a slower draft pace (their streams start from it). */
  readonly pacedChats: number;
  /**
   * Ms between drafts that a stream into a chat with no pace of its own starts from: the pace a
   * 429 taught last in any chat (a faster one taught within the last minute wins), relaxed as a
   * chat's own pace is; 0 while no 429 taught one.
   */
  readonly priorDraftSpacingMs: number;
  /** Chats where drafts were refused (they stream with edits). */
  readonly refusedChats: number;
  /** Whether the server lacks `sendMessageDraft` altogether. */
  readonly draftsUnavailable: boolean;
  /** Stop presses routed to a stream. */
  readonly stopsRouted: number;
}

/**
 * Opens streamed messages over an outbox. Route every update through
 * {@link StreamRegistry.handleUpdate} (it answers whether the update was a Stop press for one of
 * its streams) so Stop buttons reach their streams.
 *
 * @example
 * const streams = new StreamRegistry({ outbox, transport: (method, params, signal) => call(method, params, signal) });
 * const outcome = await streams.pipe(chatId, generateAnswer, { canStop: true });
 */
export class StreamRegistry {
  readonly #options: ResolvedRegistryOptions;
  readonly #host: StreamHost<MessageStream>;
  readonly #byDraft = new Map<string, MessageStream>();
  readonly #draftsOf = new Map<MessageStream, string[]>();
  readonly #active = new Set<MessageStream>();
  /** The open streams of each chat, for the writes of the bot's own that concern them. */
  readonly #byChat = new Map<string, Set<MessageStream>>();
  readonly #canStop = new Set<MessageStream>();
  readonly #latest = new LatestMessages();
  readonly #refused = new Map<string, true>();
  readonly #paces = new Map<string, LearnedDraftPace>();
  /** The pace streams into chats that taught none start from (see `learnDraftPace`). */
  #prior: LearnedDraftPace | undefined;
  #draftsUnavailable = false;
  #nextDraftId = 1;
  #stopsRouted = 0;

  /** @throws {TypeError|RangeError} naming the option, when an option is invalid. */
  constructor(options: StreamRegistryOptions) {
    this.#options = resolveRegistryOptions(options);
    const { outbox, transport, clock } = this.#options;
    this.#host = {
      outbox,
      transport,
      clock,
      nextDraftId: (stream) => {
        const id = this.#nextDraftId++;
        const key = `${chatKeyOf(stream.chatId)}:${id}`;
        this.#byDraft.set(key, stream);
        let keys = this.#draftsOf.get(stream);
        if (keys === undefined) {
          keys = [];
          this.#draftsOf.set(stream, keys);
        }
        keys.push(key);
        return id;
      },
      draftsRefused: (chatKey) => this.#draftsUnavailable || this.#refused.has(chatKey),
      draftPace: (chatKey) => this.#paces.get(chatKey) ?? this.#prior,
      learnDraftPace: (chatKey, pace) => {
        remember(this.#paces, chatKey, pace, streamDefaults.maxPacedChats);
        // A limit one chat taught is likely every chat's: a new chat's first stream starts
        // from it instead of paying a whole-second retry_after to learn it again. The latest
        // lesson is the prior, unless a faster one is still held: one chat that needed a
        // slower pace does not slow every new chat.
        const prior = this.#prior;
        const isHeld =
          prior !== undefined && pace.atMs - prior.atMs < streamDefaults.learnedDraftPaceHoldMs;
        if (!isHeld || pace.spacingMs <= (prior as LearnedDraftPace).spacingMs) this.#prior = pace;
      },
      refuseDrafts: (chatKey, everywhere) => {
        if (everywhere) this.#draftsUnavailable = true;
        remember(this.#refused, chatKey, true, streamDefaults.maxRefusedChats);
      },
      noteMessage: (chatKey, messageId) => this.#latest.note(chatKey, messageId),
      isNewest: (chatKey, messageId) => this.#latest.isNewest(chatKey, messageId),
      release: (stream) => {
        const chatKey = chatKeyOf(stream.chatId);
        if (this.#active.delete(stream)) this.#latest.closed(chatKey);
        const inChat = this.#byChat.get(chatKey);
        inChat?.delete(stream);
        if (inChat?.size === 0) this.#byChat.delete(chatKey);
        this.#canStop.delete(stream);
        for (const key of this.#draftsOf.get(stream) ?? []) this.#byDraft.delete(key);
        this.#draftsOf.delete(stream);
      },
    };
  }

  /**
   * Opens a stream into a chat; feed it with `append`/`replace`, then `end()`.
   * @throws {TypeError|RangeError} for an invalid chat id or option.
   */
  open(chatId: ChatId, options?: StreamMessageOptions): MessageStream {
    const chatKey = chatKeyOf(chatId);
    const resolved = resolveStreamOptions(options, this.#options.defaults);
    const stream = new MessageStream(chatId, chatKey, resolved, this.#host);
    if (stream.snapshot().state !== "ended") {
      this.#active.add(stream);
      this.#latest.opened(chatKey);
      const inChat = this.#byChat.get(chatKey);
      if (inChat === undefined) this.#byChat.set(chatKey, new Set([stream]));
      else inChat.add(stream);
      if (resolved.canStop) this.#canStop.add(stream);
    }
    return stream;
  }

  /**
   * Opens a stream and feeds it from `source` (each piece appended), ending it when the source
   * ends. A source given as a function gets the stream's signal, which aborts on Stop. When the
   * source throws (or yields a piece that is neither a string nor `{ text, entities? }`), the text
   * so far is the final and the outcome carries `sourceError`.
   *
   * @throws {TypeError|RangeError} for an invalid chat id, source or option.
   */
  pipe(chatId: ChatId, source: StreamSource, options?: StreamMessageOptions): MessageStream {
    this.validate(chatId, source, options);
    const stream = this.open(chatId, options);
    void (async () => {
      try {
        const pieces = typeof source === "function" ? source(stream.signal) : source;
        const entities: MessageEntity[] = [];
        for await (const piece of pieces as AsyncIterable<unknown>) {
          if (!appendPiece(stream, piece, entities)) break;
        }
        stream.end();
      } catch (error) {
        stream.fail(error);
      }
    })();
    return stream;
  }

  /**
   * Throws what {@link StreamRegistry.pipe} would throw for these arguments, without opening a
   * stream: for a caller that checks a call at once and opens the stream later.
   *
   * @throws {TypeError|RangeError} for an invalid chat id, source or option.
   */
  validate(chatId: ChatId, source: StreamSource, options?: StreamMessageOptions): void {
    chatKeyOf(chatId);
    if (
      typeof source !== "function" &&
      (typeof source !== "object" ||
        source === null ||
        (!(Symbol.asyncIterator in source) && !(Symbol.iterator in source)))
    ) {
      throw new TypeError("Expected `source` to be an iterable, an async iterable or a function");
    }
    resolveStreamOptions(options, this.#options.defaults);
  }

  /**
   * Routes an update: a `stopped_message_generation` for one of the registry's drafts stops that
   * stream (its signal aborts, and the text so far becomes the final). Returns whether it did.
   * A new message is noted (see {@link StreamRegistry.noteMessage}).
   */
  handleUpdate(update: Update): boolean {
    const message = update?.message ?? update?.channel_post;
    if (message !== undefined) this.noteMessage(message.chat.id, message.message_id);
    const stop = update?.stopped_message_generation;
    if (stop === undefined) return false;
    const stream = this.#byDraft.get(`${chatKeyOf(stop.chat.id)}:${stop.draft_id}`);
    if (stream === undefined) return false;
    this.#stopsRouted++;
    stream.stop();
    return true;
  }

  /**
   * Tells the registry a message is in a chat: a stream there finishes in its progress message
   * only while nothing newer is there (`handleUpdate` notes the messages it sees; a transport
   * should note what else the bot sends). Ignored for chats with no open stream.
   */
  noteMessage(chatId: ChatId, messageId: number): void {
    this.#latest.note(chatKeyOf(chatId), messageId);
  }

  /**
   * Tells the registry of a write the bot makes itself, as the outbox schedules it (a
   * {@link WritePlan} or the op made of it), when it is enqueued. One that supersedes a stream's
   * progress edits — a delete of its progress message, a send that replaces it — makes the
   * stream let go of that message: the edit it holds back (a stream spaces its own edits, so
   * that edit is not in the outbox yet) is never made, the stream shows no more progress, and
   * what is left of its text is sent as new messages. The grammY transformer tells it of every
   * write; a transport of your own should tell it of deletes. Ignored where no stream is open.
   */
  noteWrite(write: {
    readonly chatId?: ChatId | undefined;
    readonly supersedes?: readonly string[] | undefined;
  }): void {
    const { chatId, supersedes } = write;
    if (chatId === undefined || supersedes === undefined || supersedes.length === 0) return;
    const streams = this.#byChat.get(chatKeyOf(chatId));
    for (const stream of streams ?? []) stream.supersede(supersedes);
  }

  /** Live counts. */
  snapshot(): StreamRegistrySnapshot {
    let stoppable = 0;
    for (const stream of this.#canStop) if (stream.snapshot().mode === "draft") stoppable++;
    return Object.freeze({
      active: this.#active.size,
      stoppable,
      pacedChats: this.#paces.size,
      priorDraftSpacingMs:
        this.#prior === undefined ? 0 : relaxedSpacingMs(this.#prior, this.#options.clock.now()),
      refusedChats: this.#refused.size,
      draftsUnavailable: this.#draftsUnavailable,
      stopsRouted: this.#stopsRouted,
    });
  }
}

// One streamed message: the latest text in, what the person sees out — paced draft frames in a
// private chat, or a progress message with coalesced edits — then real messages that are never lost.

import type { Message, MessageEntity } from "@grammyjs/types";
import { type Clock, createDeferred, type Deferred, describeValue } from "@telepace/core";
import { type ChatId, isGroupChat } from "../chat.js";
import { OutboxError } from "../errors.js";
import type { OutboxOperation } from "../operation.js";
import type { TelegramOutbox } from "../outbox.js";
import type { OutboxOutcome } from "../outcome.js";
import { replacingProgress } from "../writes/replace-progress.js";
import { planWrite, writeOperation } from "../writes/write-plan.js";
import { isForbidden, isRefusal } from "./draft-refusal.js";
import { EditBudget } from "./edit-budget.js";
import { splitMessageText, type TextChunk } from "./split-text.js";
import {
  type ResolvedStreamOptions,
  type StreamMethod,
  type StreamTransport,
  streamDefaults,
} from "./stream-options.js";
import type { StreamMode, StreamOutcome } from "./stream-outcome.js";

/** What a stream needs from the registry that opened it. */
export interface StreamHost {
  readonly outbox: TelegramOutbox;
  readonly transport: StreamTransport;
  readonly clock: Clock;
  /** A fresh draft id, routed to this stream for Stop presses. */
  nextDraftId(stream: MessageStream): number;
  /** Whether drafts are known to be refused in this chat. */
  draftsRefused(chatKey: string): boolean;
  /** Remembers a refusal: for this chat, or for every chat (the server lacks the method). */
  refuseDrafts(chatKey: string, everywhere: boolean): void;
  /** The stream ended: forget its draft ids. */
  release(stream: MessageStream): void;
}

/** Options of {@link MessageStream.replace}. */
export interface ReplaceOptions {
  /** Explicit entities of the whole text (instead of a `parseMode`). */
  readonly entities?: readonly MessageEntity[] | undefined;
}

/** A live view of a stream. */
export interface MessageStreamSnapshot {
  readonly state: "streaming" | "finishing" | "ended";
  readonly mode: StreamMode;
  readonly draftId: number | undefined;
  readonly textLength: number;
  readonly messages: number;
  readonly draftFrames: number;
  readonly edits: number;
  readonly stopped: boolean;
}

type Sent = Message.TextMessage;

/**
 * One message streamed into one chat. Feed it with {@link MessageStream.append} /
 * {@link MessageStream.replace} (or let {@link StreamRegistry.pipe} feed it from an async
 * iterable), then {@link MessageStream.end}. Only the latest text is kept: a producer faster than
 * Telegram costs no memory beyond it, and each frame or edit reads the text when it starts.
 */
export class MessageStream {
  /** The chat streamed into. */
  readonly chatId: ChatId;
  /**
   * Aborts when the person presses Stop (reason: an `OutboxError` `ERR_STREAM_STOPPED`), when the
   * caller's signal aborts, or when the stream ends: a producer checks it to stop generating.
   */
  readonly signal: AbortSignal;
  /** The outcome; also returned by {@link MessageStream.end}. */
  readonly result: Promise<StreamOutcome>;

  readonly #host: StreamHost;
  readonly #options: ResolvedStreamOptions;
  readonly #chatKey: string;
  readonly #controller = new AbortController();
  readonly #editBudget: EditBudget;
  #mode: StreamMode;
  #text = "";
  #entities: readonly MessageEntity[] | undefined;
  #version = 0;
  #shownVersion = 0;
  #state: "streaming" | "finishing" | "ended" = "streaming";
  #stopped = false;
  #sourceError: unknown;
  #wake: Deferred<void> | undefined;
  readonly #finishing = createDeferred<void>();
  #draftId: number | undefined;
  #lastDraftAt = Number.NEGATIVE_INFINITY;
  #progress: { id: number; text: string } | undefined;
  readonly #messages: Sent[] = [];
  /** Chunks already made messages of their own. */
  #sealed = 0;
  #draftFrames = 0;
  #edits = 0;

  /** @internal Opened by {@link StreamRegistry.open}. */
  constructor(chatId: ChatId, chatKey: string, options: ResolvedStreamOptions, host: StreamHost) {
    this.chatId = chatId;
    this.#chatKey = chatKey;
    this.#options = options;
    this.#host = host;
    this.signal = this.#controller.signal;
    const isPrivate = !isGroupChat(chatKey);
    const editIntervalMs =
      options.editIntervalMs ??
      (isPrivate ? streamDefaults.privateEditIntervalMs : streamDefaults.groupEditIntervalMs);
    this.#editBudget = new EditBudget(options.editBurst, editIntervalMs);
    this.#mode = options.drafts && isPrivate && !host.draftsRefused(chatKey) ? "draft" : "edit";
    const caller = options.signal;
    if (caller !== undefined) {
      if (caller.aborted) this.#controller.abort(caller.reason);
      else caller.addEventListener("abort", () => this.#abort(caller.reason), { once: true });
    }
    this.result = this.#run().finally(() => {
      this.#state = "ended";
      if (!this.#controller.signal.aborted) {
        this.#controller.abort(new OutboxError("ERR_STREAM_ENDED", "The stream ended"));
      }
      host.release(this);
    });
    // The caller may only ever await `end()`; an abort must not be an unhandled rejection here.
    this.result.catch(() => {});
  }

  /** The whole text so far. */
  get text(): string {
    return this.#text;
  }

  /** The current draft id (draft mode), which a Stop press names. */
  get draftId(): number | undefined {
    return this.#draftId;
  }

  /**
   * Appends to the text. Returns false (and changes nothing) once the stream is ending: after
   * `end()`, a Stop press or an abort.
   * @throws {TypeError} when `text` is not a string.
   */
  append(text: string): boolean {
    if (typeof text !== "string") {
      throw new TypeError(`Expected \`text\` to be a string, got ${describeValue(text)}`);
    }
    if (this.#state !== "streaming" || this.#stopped) return false;
    if (text.length === 0) return true;
    return this.#set(this.#text + text, this.#entities);
  }

  /**
   * Replaces the whole text (and its entities). Returns false once the stream is ending.
   * @throws {TypeError} when `text` is not a string.
   */
  replace(text: string, options: ReplaceOptions = {}): boolean {
    if (typeof text !== "string") {
      throw new TypeError(`Expected \`text\` to be a string, got ${describeValue(text)}`);
    }
    if (this.#state !== "streaming" || this.#stopped) return false;
    return this.#set(text, options.entities);
  }

  /** Ends the text: the final message(s) are sent. Resolves with the outcome. */
  end(): Promise<StreamOutcome> {
    if (this.#state === "streaming") this.#startFinishing();
    return this.result;
  }

  /** A live view: mode, counts, whether it was stopped. */
  snapshot(): MessageStreamSnapshot {
    return Object.freeze({
      state: this.#state,
      mode: this.#mode,
      draftId: this.#draftId,
      textLength: this.#text.length,
      messages: this.#messages.length,
      draftFrames: this.#draftFrames,
      edits: this.#edits,
      stopped: this.#stopped,
    });
  }

  /** @internal The person pressed Stop on one of this stream's drafts. */
  stop(): void {
    if (this.#stopped || this.#state === "ended") return;
    this.#stopped = true;
    this.#controller.abort(new OutboxError("ERR_STREAM_STOPPED", "The person pressed Stop"));
    this.end();
  }

  /** @internal The source threw: the text so far becomes the final. */
  fail(error: unknown): void {
    if (this.#state !== "streaming") return;
    this.#sourceError = error;
    this.end();
  }

  #set(text: string, entities: readonly MessageEntity[] | undefined): boolean {
    this.#text = text;
    this.#entities = entities;
    this.#version++;
    this.#poke();
    return true;
  }

  #poke(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.resolve();
  }

  #startFinishing(): void {
    this.#state = "finishing";
    this.#finishing.resolve();
    this.#poke();
  }

  #abort(reason: unknown): void {
    if (this.#state === "ended") return;
    this.#controller.abort(reason);
    this.#startFinishing();
  }

  #isAborted(): boolean {
    return this.#options.signal?.aborted ?? false;
  }

  /** Waits until there is something to do, or `ms` passed. */
  async #idle(ms: number | undefined): Promise<void> {
    if (this.#state !== "streaming" || this.#version !== this.#shownVersion) return;
    const wake = createDeferred<void>();
    this.#wake = wake;
    const timer =
      ms === undefined ? undefined : this.#host.clock.setTimer(() => wake.resolve(), ms);
    await wake.promise;
    timer?.cancel();
  }

  /** Waits `ms`, or less when the stream starts finishing. */
  async #pause(ms: number): Promise<void> {
    if (ms <= 0 || this.#state !== "streaming") return;
    let timer: { cancel(): void } | undefined;
    await Promise.race([
      new Promise<void>((resolve) => {
        timer = this.#host.clock.setTimer(resolve, ms);
      }),
      this.#finishing.promise,
    ]);
    timer?.cancel();
  }

  #chunks(isComplete: boolean): TextChunk[] {
    const format =
      this.#options.parseMode === undefined
        ? { entities: this.#entities }
        : { parseMode: this.#options.parseMode };
    return splitMessageText(this.#text, format, {
      limit: this.#options.maxTextLength,
      isComplete,
    });
  }

  /** The chunk being streamed now: the first not yet sent as a message. */
  #liveChunk(isComplete = false): TextChunk | undefined {
    return this.#chunks(isComplete)[this.#sealed];
  }

  #textParams(chunk: TextChunk): Record<string, unknown> {
    return {
      text: chunk.text,
      ...(this.#options.parseMode === undefined ? {} : { parse_mode: this.#options.parseMode }),
      ...(chunk.entities === undefined || chunk.entities.length === 0
        ? {}
        : { entities: chunk.entities }),
    };
  }

  #enqueue<T>(op: OutboxOperation<T>): Promise<OutboxOutcome<T>> {
    return this.#host.outbox.enqueue(op, { signal: this.#options.signal });
  }

  /** The op of a stream request to this chat, scheduled as the outbox plans `method`. */
  #op<T>(
    method: StreamMethod,
    target: Record<string, unknown>,
    execute: (signal: AbortSignal) => Promise<T>,
  ): OutboxOperation<T> {
    return writeOperation(planWrite(method, { chat_id: this.chatId, ...target }), execute);
  }

  #call(method: StreamMethod, params: Record<string, unknown>, signal: AbortSignal) {
    if (method !== "sendMessageDraft") this.#editBudget.record(this.#host.clock.now());
    return this.#host.transport(method, { chat_id: this.chatId, ...params }, signal);
  }

  async #run(): Promise<StreamOutcome> {
    try {
      await this.#stream();
      if (this.#isAborted()) throw this.#options.signal?.reason;
      return await this.#finish();
    } catch (error) {
      if (this.#isAborted()) throw this.#options.signal?.reason;
      return this.#failed(error);
    }
  }

  /** Shows the text while it grows, until `end()`, Stop or an abort. */
  async #stream(): Promise<void> {
    if (this.#mode === "draft" && this.#options.thinking) await this.#drawDraft(true);
    while (this.#state === "streaming") {
      await this.#idle(this.#mode === "draft" ? this.#options.draftRefreshMs : undefined);
      if (this.#state !== "streaming") return;
      if (this.#mode === "draft") {
        await this.#pause(
          this.#lastDraftAt + this.#options.draftIntervalMs - this.#host.clock.now(),
        );
        if (this.#state !== "streaming") return;
      }
      await this.#sealFull();
      if (this.#mode === "draft") await this.#drawDraft(false);
      else {
        if (this.#progress !== undefined) {
          await this.#pause(this.#editBudget.waitMs(this.#host.clock.now()));
          if (this.#state !== "streaming") return;
        }
        await this.#drawEdit();
      }
    }
  }

  /** Sends every chunk before the live one that is complete (the text passed the limit). */
  async #sealFull(): Promise<void> {
    const chunks = this.#chunks(false);
    while (this.#sealed < chunks.length - 1) {
      const failure = await this.#deliverChunk(chunks[this.#sealed] as TextChunk);
      if (failure !== undefined) throw failure;
    }
  }

  /** One draft frame of the live chunk (read when the frame starts). */
  async #drawDraft(isPlaceholder: boolean): Promise<void> {
    if (this.#draftId === undefined) this.#draftId = this.#host.nextDraftId(this);
    const draftId = this.#draftId;
    let version = this.#version;
    this.#lastDraftAt = this.#host.clock.now();
    const outcome = await this.#enqueue(
      this.#op("sendMessageDraft", { draft_id: draftId }, (signal) => {
        version = this.#version;
        // Finishing: the final message is next and replaces the draft.
        if (this.#state !== "streaming" && !isPlaceholder) return Promise.resolve(false);
        const chunk = isPlaceholder ? { text: "" } : (this.#liveChunk() ?? { text: "" });
        this.#lastDraftAt = this.#host.clock.now();
        return this.#call(
          "sendMessageDraft",
          {
            draft_id: draftId,
            ...this.#textParams(chunk),
            ...this.#threadParams(),
            ...(this.#options.canStop
              ? { can_stop: true, keep_on_stop: this.#options.keepOnStop }
              : {}),
          },
          signal,
        );
      }),
    );
    if (outcome.status === "delivered") {
      if (outcome.result !== false) this.#draftFrames++;
    } else if (outcome.status === "failed") {
      const refusal = isRefusal(outcome.error);
      if (refusal.refused) {
        this.#host.refuseDrafts(this.#chatKey, refusal.everywhere);
        this.#mode = "edit";
        return;
      }
      if (isForbidden(outcome.error)) throw outcome.error;
    } else if (outcome.status === "closed") {
      throw new OutboxError("ERR_OUTBOX_CLOSED", "The outbox closed during the stream");
    }
    // A frame that failed for another reason is skipped: the next one carries newer text.
    if (!isPlaceholder) this.#shownVersion = version;
  }

  #threadParams(): Record<string, unknown> {
    const thread = this.#options.params.message_thread_id;
    return thread === undefined ? {} : { message_thread_id: thread };
  }

  /** Sends the progress message, or edits it to the live chunk (read when the edit starts). */
  async #drawEdit(): Promise<void> {
    let version = this.#version;
    const progress = this.#progress;
    if (progress === undefined) {
      const chunk = this.#liveChunk();
      if (chunk === undefined || chunk.text.trim() === "") {
        this.#shownVersion = version;
        return;
      }
      let text = chunk.text;
      const outcome = await this.#enqueue(
        this.#op("sendMessage", {}, (signal) => {
          version = this.#version;
          const live = this.#liveChunk() ?? chunk;
          text = live.text;
          return this.#call(
            "sendMessage",
            { ...this.#options.params, ...this.#textParams(live) },
            signal,
          ) as Promise<Sent>;
        }),
      );
      this.#shownVersion = version;
      if (outcome.status === "delivered" && outcome.result !== undefined) {
        this.#progress = { id: outcome.result.message_id, text };
      } else if (outcome.status === "closed") {
        throw new OutboxError("ERR_OUTBOX_CLOSED", "The outbox closed during the stream");
      } else if (outcome.status === "failed" && isForbidden(outcome.error)) {
        throw outcome.error;
      }
      return;
    }
    let text = progress.text;
    const outcome = await this.#enqueue(
      this.#op("editMessageText", { message_id: progress.id }, (signal) => {
        version = this.#version;
        const chunk = this.#liveChunk();
        // Finishing: the final replaces the progress message at once, so this edit is moot.
        const isMoot =
          this.#state !== "streaming" ||
          chunk === undefined ||
          chunk.text.trim() === "" ||
          chunk.text === progress.text;
        if (isMoot) return Promise.resolve(true);
        text = chunk.text;
        return this.#call(
          "editMessageText",
          { message_id: progress.id, ...this.#editParams(), ...this.#textParams(chunk) },
          signal,
        );
      }),
    );
    this.#shownVersion = version;
    if (outcome.status === "delivered") {
      if (text !== progress.text) this.#edits++;
      progress.text = text;
    } else if (outcome.status === "closed") {
      throw new OutboxError("ERR_OUTBOX_CLOSED", "The outbox closed during the stream");
    } else if (outcome.status === "failed" && isForbidden(outcome.error)) {
      throw outcome.error;
    }
  }

  #editParams(): Record<string, unknown> {
    const { link_preview_options: preview, reply_markup: markup } = this.#options.params;
    return {
      ...(preview === undefined ? {} : { link_preview_options: preview }),
      ...(markup === undefined ? {} : { reply_markup: markup }),
    };
  }

  /**
   * Makes one chunk a message of its own. A draft becomes a real message (`sendMessage`); a
   * progress message gets the chunk as its last edit. Returns the failure when it could not.
   */
  async #deliverChunk(chunk: TextChunk, isLast = false): Promise<unknown> {
    const progress = this.#progress;
    if (progress !== undefined && !isLast) {
      const edited = await this.#editTo(progress.id, chunk);
      if (edited.status === "delivered") {
        this.#progress = undefined;
        this.#sealed++;
        return undefined;
      }
      // The progress message could not take it: send the chunk as a message of its own.
      this.#progress = undefined;
    }
    const sent = await this.#send(chunk, isLast ? progress?.id : undefined);
    if (sent.status === "delivered" && sent.result !== undefined) {
      this.#messages.push(sent.result as Sent);
      this.#sealed++;
      // The next chunk's draft gets a new id, so it replaces the sent one instead of animating.
      if (this.#mode === "draft" && !isLast) this.#draftId = this.#host.nextDraftId(this);
      return undefined;
    }
    if (progress !== undefined && isLast) {
      // As the reference bot does: a final that could not be sent becomes the progress
      // message's text. Nothing is lost; at worst it shows twice if the send did arrive.
      const edited = await this.#editTo(progress.id, chunk);
      if (edited.status === "delivered") {
        this.#sealed++;
        return undefined;
      }
    } else if (sent.status === "failed" && sent.maybeDelivered) {
      // No progress message to fall back on: one more send. At worst the final shows twice.
      const again = await this.#send(chunk, undefined);
      if (again.status === "delivered" && again.result !== undefined) {
        this.#messages.push(again.result as Sent);
        this.#sealed++;
        return undefined;
      }
      return again;
    }
    return sent;
  }

  #editTo(messageId: number, chunk: TextChunk): Promise<OutboxOutcome<unknown>> {
    return this.#enqueue(
      this.#op("editMessageText", { message_id: messageId }, (signal) =>
        this.#call(
          "editMessageText",
          { message_id: messageId, ...this.#editParams(), ...this.#textParams(chunk) },
          signal,
        ),
      ),
    ).then((outcome) => {
      if (outcome.status === "delivered") {
        const message = outcome.result;
        if (typeof message === "object" && message !== null) this.#messages.push(message as Sent);
      }
      return outcome;
    });
  }

  /** A chunk as a new message; with `replacing`, the progress message is deleted once it is. */
  #send(chunk: TextChunk, replacing: number | undefined): Promise<OutboxOutcome<unknown>> {
    const params = { ...this.#options.params, ...this.#textParams(chunk) };
    const send = this.#op("sendMessage", {}, (signal) => this.#call("sendMessage", params, signal));
    return this.#enqueue<unknown>(
      replacing === undefined
        ? send
        : replacingProgress(send, replacing, (signal) =>
            this.#call("deleteMessage", { message_id: replacing }, signal),
          ),
    );
  }

  #base() {
    return {
      messages: Object.freeze([...this.#messages]),
      mode: this.#mode,
      stopped: this.#stopped,
      draftFrames: this.#draftFrames,
      edits: this.#edits,
      ...(this.#sourceError === undefined ? {} : { sourceError: this.#sourceError }),
    };
  }

  /** The outcome for a failure: an outcome that was not delivered, or what was thrown. */
  #failed(failure: unknown): StreamOutcome {
    const isOutcome =
      typeof failure === "object" &&
      failure !== null &&
      "status" in failure &&
      "attempts" in failure;
    const outcome = isOutcome ? (failure as OutboxOutcome<unknown>) : undefined;
    const closed =
      outcome?.status === "closed" ||
      (failure instanceof OutboxError && failure.code === "ERR_OUTBOX_CLOSED");
    if (closed) return Object.freeze({ status: "closed", ...this.#base() });
    return Object.freeze({
      status: "failed",
      error: outcome === undefined ? failure : "error" in outcome ? outcome.error : failure,
      maybeDelivered: outcome?.status === "failed" && outcome.maybeDelivered,
      ...this.#base(),
    });
  }

  /** Sends what is left of the text as messages; the last replaces the progress message. */
  async #finish(): Promise<StreamOutcome> {
    const chunks = this.#chunks(true);
    while (this.#sealed < chunks.length) {
      const index = this.#sealed;
      const chunk = chunks[index] as TextChunk;
      if (chunk.text.trim() === "") break;
      const failure = await this.#deliverChunk(chunk, index === chunks.length - 1);
      if (failure !== undefined) return this.#failed(failure);
    }
    return Object.freeze({ status: "delivered", ...this.#base() });
  }
}

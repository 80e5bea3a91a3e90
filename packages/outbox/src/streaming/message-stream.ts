// One streamed message: the latest text in, what the person sees out — paced draft frames in a
// private chat, or a progress message with coalesced edits — then real messages that are never lost.

import type { Message } from "@grammyjs/types";
import { createDeferred, type Deferred, describeValue } from "@telepace/core";
import { type ChatId, isGroupChat } from "../chat.js";
import { OutboxError } from "../errors.js";
import type { OutboxOperation } from "../operation.js";
import type { OutboxOutcome } from "../outcome.js";
import { replacingProgress } from "../writes/replace-progress.js";
import { writeKeys } from "../writes/write-keys.js";
import { planWrite, writeOperation } from "../writes/write-plan.js";
import { DraftPacer } from "./draft-pacer.js";
import { isForbidden, isRefusal } from "./draft-refusal.js";
import { EditBudget } from "./edit-budget.js";
import type { PlacedChunk } from "./split-text.js";
import type { StreamHost } from "./stream-host.js";
import { type ResolvedStreamOptions, type StreamMethod, streamDefaults } from "./stream-options.js";
import { failureOutcome, type StreamMode, type StreamOutcome } from "./stream-outcome.js";
import { editTargetOf, threadParamsOf } from "./stream-params.js";
import { StreamText } from "./stream-text.js";
import type { MessageStreamSnapshot, ReplaceOptions } from "./stream-view.js";

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

  readonly #host: StreamHost<MessageStream>;
  readonly #options: ResolvedStreamOptions;
  readonly #chatKey: string;
  readonly #controller = new AbortController();
  readonly #editBudget: EditBudget;
  #mode: StreamMode;
  readonly #text: StreamText;
  #shownVersion = 0;
  #state: "streaming" | "finishing" | "ended" = "streaming";
  #stopped = false;
  #sourceError: unknown;
  #wake: Deferred<void> | undefined;
  readonly #finishing = createDeferred<void>();
  #draftId: number | undefined;
  readonly #draftPacer: DraftPacer;
  /** The progress message (edit mode) and the chunk it shows. */
  #progress: { message: Sent; chunk: PlacedChunk } | undefined;
  /** False once the bot deleted (or replaced) the progress message: no progress is shown. */
  #showsProgress = true;
  readonly #messages: Sent[] = [];
  #draftFrames = 0;
  #edits = 0;

  /** @internal Opened by {@link StreamRegistry.open}. */
  constructor(
    chatId: ChatId,
    chatKey: string,
    options: ResolvedStreamOptions,
    host: StreamHost<MessageStream>,
  ) {
    this.chatId = chatId;
    this.#chatKey = chatKey;
    this.#options = options;
    this.#host = host;
    this.#text = new StreamText(options.parseMode, options.maxTextLength);
    this.signal = this.#controller.signal;
    const isPrivate = !isGroupChat(chatKey);
    const editIntervalMs =
      options.editIntervalMs ??
      (isPrivate ? streamDefaults.privateEditIntervalMs : streamDefaults.groupEditIntervalMs);
    this.#editBudget = new EditBudget(options.editBurst, editIntervalMs);
    this.#draftPacer = new DraftPacer(options.draftIntervalMs, host.draftPace(chatKey));
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
    return this.#text.value;
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
    this.#text.append(text);
    this.#poke();
    return true;
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
    this.#text.replace(text, options.entities);
    this.#poke();
    return true;
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
      textLength: this.#text.value.length,
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

  /**
   * @internal A write of the bot's own supersedes these edit keys in the stream's chat (a delete
   * of a message, a send replacing it). When one is the progress message's, the stream lets go
   * of it: the edit it holds is never made, it shows no more progress, and what is left of its
   * text goes out as new messages.
   */
  supersede(keys: readonly string[]): void {
    const progress = this.#progress;
    if (progress === undefined) return;
    if (!keys.includes(writeKeys.edit(progress.message.message_id))) return;
    this.#progress = undefined;
    this.#showsProgress = false;
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
    if (this.#state !== "streaming" || this.#text.version !== this.#shownVersion) return;
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
      if (this.#fullChunk() === undefined && !this.#awaitsNextPart()) {
        await this.#idle(this.#mode === "draft" ? this.#options.draftRefreshMs : undefined);
        if (this.#state !== "streaming") return;
      }
      const clock = this.#host.clock;
      if (this.#mode === "draft") {
        await this.#pause(this.#draftPacer.waitMs(clock.now()));
        if (this.#state !== "streaming") return;
        for (let full = this.#fullChunk(); full !== undefined; full = this.#fullChunk()) {
          await this.#seal(full);
        }
        await this.#drawDraft(false);
        continue;
      }
      // Every request of a progress message waits for the budget — an edit, the last edit of a
      // part the text has passed, the send of the next part — so a split leaves no debt behind.
      await this.#pause(this.#editBudget.waitMs(clock.now()));
      if (this.#state !== "streaming") return;
      const full = this.#fullChunk();
      if (full !== undefined) await this.#seal(full);
      else if (this.#showsProgress) await this.#drawEdit();
      else this.#shownVersion = this.#text.version; // nothing to show until a part is full
    }
  }

  /** The first chunk before the live one that is complete (the text passed the limit). */
  #fullChunk(): PlacedChunk | undefined {
    const chunks = this.#text.chunks(false);
    return this.#text.sealed < chunks.length - 1 ? chunks[this.#text.sealed] : undefined;
  }

  /** A part was sealed and the text after it is not on screen yet (edit mode). */
  #awaitsNextPart(): boolean {
    const isBetween =
      this.#mode === "edit" &&
      this.#showsProgress &&
      this.#progress === undefined &&
      this.#text.sealed > 0;
    const live = isBetween ? this.#text.live() : undefined;
    return live !== undefined && this.#text.isVisible(live);
  }

  /**
   * Makes a complete chunk a message of its own. A progress message that already shows enough of
   * it, ending at a space, is finished as it is: the part ends there, and the split costs the
   * budget one request (the next part's send) instead of two.
   */
  async #seal(chunk: PlacedChunk): Promise<void> {
    const progress = this.#progress;
    if (progress !== undefined && this.#text.mayEndAsShown(progress.chunk, chunk)) {
      // The message as its last delivered request left it.
      const { entities: _sent, ...message } = progress.message;
      const { text, entities = [] } = progress.chunk;
      const own = entities.length > 0 ? { entities: [...entities] } : {};
      this.#messages.push({ ...message, text, ...own });
      this.#progress = undefined;
      this.#text.seal(progress.chunk);
      return;
    }
    const failure = await this.#deliverChunk(chunk, false);
    if (failure !== undefined) throw failure;
  }

  /** One draft frame of the live chunk (read when the frame starts). */
  async #drawDraft(isPlaceholder: boolean): Promise<void> {
    if (this.#draftId === undefined) this.#draftId = this.#host.nextDraftId(this);
    const draftId = this.#draftId;
    let version = this.#text.version;
    const outcome = await this.#enqueue(
      this.#op("sendMessageDraft", { draft_id: draftId }, (signal) => {
        version = this.#text.version;
        // Finishing: the final message is next and replaces the draft.
        if (this.#state !== "streaming" && !isPlaceholder) return Promise.resolve(false);
        const chunk = isPlaceholder ? undefined : this.#text.live();
        if (chunk !== undefined) this.#text.shown(chunk);
        return this.#draftPacer.track(
          this.#host.clock,
          (pace) => this.#host.learnDraftPace(this.#chatKey, pace),
          this.#call(
            "sendMessageDraft",
            {
              draft_id: draftId,
              ...this.#text.params(chunk ?? { text: "" }),
              ...threadParamsOf(this.#options.params),
              ...(this.#options.canStop
                ? { can_stop: true, keep_on_stop: this.#options.keepOnStop }
                : {}),
            },
            signal,
          ),
        );
      }),
    );
    if (outcome.status === "delivered") {
      if (outcome.result !== false) this.#draftFrames++;
    } else if (outcome.status === "failed") {
      this.#draftPacer.failed(this.#host.clock.now());
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

  /** Sends the progress message, or edits it to the live chunk (read when the edit starts). */
  async #drawEdit(): Promise<void> {
    let version = this.#text.version;
    const progress = this.#progress;
    if (progress === undefined) {
      const chunk = this.#text.live();
      if (chunk === undefined || !this.#text.isVisible(chunk)) {
        this.#shownVersion = version;
        return;
      }
      let sent = chunk;
      const outcome = await this.#enqueue(
        this.#op("sendMessage", {}, (signal) => {
          version = this.#text.version;
          const live = this.#text.live() ?? chunk;
          const shown = this.#text.isVisible(live) ? live : chunk;
          this.#text.shown(shown);
          sent = shown;
          return this.#call(
            "sendMessage",
            { ...this.#options.params, ...this.#text.params(shown) },
            signal,
          ) as Promise<Sent>;
        }),
      );
      this.#shownVersion = version;
      if (outcome.status === "delivered" && outcome.result !== undefined) {
        this.#host.noteMessage(this.#chatKey, outcome.result.message_id);
        this.#progress = { message: outcome.result, chunk: sent };
      } else if (outcome.status === "closed") {
        throw new OutboxError("ERR_OUTBOX_CLOSED", "The outbox closed during the stream");
      } else if (outcome.status === "failed" && isForbidden(outcome.error)) {
        throw outcome.error;
      }
      return;
    }
    const messageId = progress.message.message_id;
    let shown = progress.chunk;
    const outcome = await this.#enqueue(
      this.#op("editMessageText", { message_id: messageId }, (signal) => {
        version = this.#text.version;
        const chunk = this.#text.live();
        // Finishing: the final replaces the progress message at once, so this edit is moot.
        const isMoot =
          this.#state !== "streaming" ||
          chunk === undefined ||
          !this.#text.isVisible(chunk) ||
          chunk.text === progress.chunk.text;
        if (isMoot) return Promise.resolve(true);
        this.#text.shown(chunk);
        shown = chunk;
        return this.#call(
          "editMessageText",
          { ...editTargetOf(this.#options.params, messageId), ...this.#text.params(chunk) },
          signal,
        );
      }),
    );
    this.#shownVersion = version;
    if (outcome.status === "delivered") {
      if (shown.text !== progress.chunk.text) this.#edits++;
      progress.chunk = shown;
    } else if (outcome.status === "closed") {
      throw new OutboxError("ERR_OUTBOX_CLOSED", "The outbox closed during the stream");
    } else if (outcome.status === "failed" && isForbidden(outcome.error)) {
      throw outcome.error;
    }
  }

  /**
   * Makes one chunk a message of its own. A progress message gets the chunk as its last edit (the
   * last chunk too, unless `finishInPlace` is off); a draft, or a progress message that could not
   * take the chunk, becomes a real message (`sendMessage`). Returns the failure when it could not.
   */
  async #deliverChunk(chunk: PlacedChunk, isLast: boolean): Promise<unknown> {
    const progress = this.#progress;
    // The last chunk goes into the progress message while it is the chat's newest; below later
    // messages it would be out of sight, so it is sent and the progress message deleted.
    const inPlace =
      progress !== undefined &&
      (!isLast ||
        (this.#options.finishInPlace &&
          this.#host.isNewest(this.#chatKey, progress.message.message_id)));
    if (inPlace) {
      const edited = await this.#editTo(progress.message, chunk);
      if (edited.status === "delivered") {
        this.#progress = undefined;
        this.#text.seal(chunk);
        return undefined;
      }
      // The progress message could not take it: the chunk goes out as a message of its own, and
      // the last one still replaces the progress message.
      if (!isLast) this.#progress = undefined;
    }
    const replaced = isLast ? this.#progress?.message.message_id : undefined;
    const sent = await this.#send(chunk, replaced);
    if (sent.status === "delivered" && sent.result !== undefined) {
      this.#messages.push(sent.result as Sent);
      this.#host.noteMessage(this.#chatKey, (sent.result as Sent).message_id);
      this.#text.seal(chunk);
      if (replaced !== undefined) this.#progress = undefined;
      // The next chunk's draft gets a new id, so it replaces the sent one instead of animating.
      if (this.#mode === "draft" && !isLast) this.#draftId = this.#host.nextDraftId(this);
      return undefined;
    }
    if (replaced !== undefined && !inPlace) {
      // As the reference bot does: a final that could not be sent becomes the progress
      // message's text. Nothing is lost; at worst it shows twice if the send did arrive.
      const edited = await this.#editTo((this.#progress as { message: Sent }).message, chunk);
      if (edited.status === "delivered") {
        this.#progress = undefined;
        this.#text.seal(chunk);
        return undefined;
      }
    } else if (replaced === undefined && sent.status === "failed" && sent.maybeDelivered) {
      // No progress message to fall back on: one more send. At worst the final shows twice.
      const again = await this.#send(chunk, undefined);
      if (again.status === "delivered" && again.result !== undefined) {
        this.#messages.push(again.result as Sent);
        this.#text.seal(chunk);
        return undefined;
      }
      return again;
    }
    return sent;
  }

  /** Edits `message` to hold `chunk`; a delivered edit adds the message to the outcome. */
  #editTo(message: Sent, chunk: PlacedChunk): Promise<OutboxOutcome<unknown>> {
    const messageId = message.message_id;
    return this.#enqueue(
      this.#op("editMessageText", { message_id: messageId }, (signal) =>
        this.#call(
          "editMessageText",
          { ...editTargetOf(this.#options.params, messageId), ...this.#text.params(chunk) },
          signal,
        ),
      ),
    ).then((outcome) => {
      if (outcome.status === "delivered") {
        // "Not modified": the message already holds the chunk, as it was sent or last edited.
        const result = outcome.result;
        const edited = typeof result === "object" && result !== null ? (result as Sent) : message;
        this.#messages.push(edited);
      }
      return outcome;
    });
  }

  /** A chunk as a new message; with `replacing`, the progress message is deleted once it is. */
  #send(chunk: PlacedChunk, replacing: number | undefined): Promise<OutboxOutcome<unknown>> {
    const params = { ...this.#options.params, ...this.#text.params(chunk) };
    const send = this.#op("sendMessage", {}, (signal) => this.#call("sendMessage", params, signal));
    return this.#enqueue<unknown>(
      replacing === undefined
        ? send
        : replacingProgress(send, replacing, (signal) =>
            this.#call("deleteMessage", { message_id: replacing }, signal),
          ),
    );
  }

  /** A progress message whose text is no longer part of the answer: deleted, best effort. */
  async #dropProgress(): Promise<void> {
    const progress = this.#progress;
    if (progress === undefined) return;
    this.#progress = undefined;
    const messageId = progress.message.message_id;
    await this.#enqueue(
      this.#op("deleteMessage", { message_id: messageId }, (signal) =>
        this.#call("deleteMessage", { message_id: messageId }, signal),
      ),
    );
  }

  /**
   * Sends what is left of the text as messages; the last one goes into the progress message.
   * A chunk with nothing to show is skipped (Telegram refuses it); a text with nothing to show at
   * all sends nothing and ends `empty`.
   */
  async #finish(): Promise<StreamOutcome> {
    const chunks = this.#text.chunks(true);
    while (this.#text.sealed < chunks.length) {
      const index = this.#text.sealed;
      const chunk = chunks[index] as PlacedChunk;
      const isLast = index === chunks.length - 1;
      if (!this.#text.isVisible(chunk)) {
        if (isLast) break;
        this.#text.seal(chunk);
        continue;
      }
      const failure = await this.#deliverChunk(chunk, isLast);
      if (failure !== undefined) return this.#failed(failure);
    }
    await this.#dropProgress();
    const status = this.#messages.length === 0 ? "empty" : "delivered";
    return Object.freeze({ status, ...this.#base() });
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
    return failureOutcome(failure, this.#base());
  }
}

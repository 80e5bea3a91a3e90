// What happened in a chat, in order: every send, edit, delete, chat action and draft with its
// time, kept in a bounded log whose overflow is counted rather than silent.

import type {
  Chat,
  ForceReply,
  Message,
  ReplyKeyboardMarkup,
  ReplyKeyboardRemove,
} from "@grammyjs/types";
import type { DraftChange, MessageDraft } from "./message-draft.js";

/**
 * The kind of a transcript event: a message sent, edited or deleted, a chat action, a draft frame
 * the bot wrote (`draft`), or the user's press of a draft's Stop button (`draft_stop`).
 */
export type TranscriptEventKind =
  | "send"
  | "edit"
  | "delete"
  | "chat_action"
  | "draft"
  | "draft_stop";

/** One thing that happened in a chat. */
export interface TranscriptEvent {
  /** Position in the simulator-wide order of events (increasing, gap-free per simulator). */
  readonly seq: number;
  readonly kind: TranscriptEventKind;
  /** The simulator clock's `now()` when it happened, in ms. */
  readonly atMs: number;
  /** Unix time in seconds, as in `Message.date`. */
  readonly date: number;
  readonly chatId: number;
  /** Who acted: a bot (through the Bot API) or a simulated user (through the control API). */
  readonly actor: "bot" | "user";
  /** User id of the actor (the bot's id for bots). */
  readonly actorId: number;
  /** The Bot API method behind a bot's event. */
  readonly method?: string;
  /** Id of the message concerned; absent for chat actions. */
  readonly messageId?: number;
  /** The message text (or caption) right after a send or edit. */
  readonly text?: string;
  /** The whole message right after a send or edit. */
  readonly message?: Message;
  /**
   * The reply keyboard, keyboard removal or force-reply request a bot's send came with. A
   * Message carries only inline keyboards, so this is where the others can be seen.
   */
  readonly replyMarkup?: ReplyKeyboardMarkup | ReplyKeyboardRemove | ForceReply;
  /** The action of a `chat_action` event, e.g. "typing". */
  readonly action?: string;
  /** The draft id of a `draft` or `draft_stop` event. */
  readonly draftId?: number;
  /** What a `draft` event did to the shown draft. */
  readonly draftChange?: DraftChange;
  /** The draft right after a `draft` event. */
  readonly draft?: MessageDraft;
}

/** A chat's messages as they now stand and everything that happened in it. */
export interface Transcript {
  readonly chat: Chat;
  /** Messages not deleted, by increasing `message_id`, each in its latest version. */
  readonly messages: readonly Message[];
  /** Events in the order they happened (the oldest may have been dropped, see below). */
  readonly events: readonly TranscriptEvent[];
  /** Events dropped because the log reached `maxTranscriptEvents`. */
  readonly droppedEvents: number;
  /** Oldest messages forgotten because the chat reached `maxMessagesPerChat` (no longer editable). */
  readonly forgottenMessages: number;
  /** The draft the user sees now (private chats), or `undefined`. */
  readonly draft: MessageDraft | undefined;
}

/** A bounded, append-only event log. */
export class EventLog {
  #events: TranscriptEvent[] = [];
  #head = 0;
  #dropped = 0;
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Appends an event; returns true when an older one had to be dropped for it. */
  append(event: TranscriptEvent): boolean {
    this.#events.push(event);
    if (this.#events.length - this.#head <= this.#limit) return false;
    this.#head++;
    this.#dropped++;
    if (this.#head > 1024 && this.#head * 2 > this.#events.length) {
      this.#events = this.#events.slice(this.#head);
      this.#head = 0;
    }
    return true;
  }

  /** The newest event, or `undefined` before the first. */
  get last(): TranscriptEvent | undefined {
    return this.#events.length > this.#head ? this.#events[this.#events.length - 1] : undefined;
  }

  /** Events dropped so far. */
  get dropped(): number {
    return this.#dropped;
  }

  /** A copy of the kept events. */
  toArray(): TranscriptEvent[] {
    return this.#events.slice(this.#head);
  }
}

// A private chat's live message draft (sendMessageDraft): at most one per chat, shown for 30 s
// after the bot's last write, animated while the draft id stays the same and replaced when it
// changes, removed by any message of the bot, and ended by the user's Stop button when it has one.

import type { MessageEntity } from "@grammyjs/types";

/** How long a draft stays shown after the bot's last write (Telegram's clients: 30 s). */
export const DRAFT_LIFETIME_MS = 30_000;

/** A draft as the user sees it now. */
export interface MessageDraft {
  readonly draftId: number;
  /** The text so far, after parsing; `""` shows Telegram's "Thinking…" placeholder. */
  readonly text: string;
  /** Entities of the text (none: an empty list). */
  readonly entities: readonly MessageEntity[];
  /** The `message_thread_id` the bot gave, if any. */
  readonly messageThreadId: number | undefined;
  /** Whether the user sees a Stop button (`can_stop`, and not stopped yet). */
  readonly hasStopButton: boolean;
  /** Whether a press of Stop keeps the draft shown (`keep_on_stop`). */
  readonly keepOnStop: boolean;
  /** The user pressed Stop and the draft was kept (`keep_on_stop`). */
  readonly isStopped: boolean;
  /** Writes with this draft id so far (the first one included). */
  readonly frames: number;
  /** Simulator clock (ms) of the first write with this draft id, and of the latest. */
  readonly startedAtMs: number;
  readonly updatedAtMs: number;
  /** When the draft disappears unless the bot writes again (`updatedAtMs` + 30 s). */
  readonly expiresAtMs: number;
}

/** What a write did: showed a draft where none was, animated the shown one, or replaced it. */
export type DraftChange = "start" | "update" | "replace";

/** One sendMessageDraft call, as the method read it. */
export interface DraftFrame {
  readonly draftId: number;
  readonly text: string;
  readonly entities: readonly MessageEntity[];
  readonly messageThreadId: number | undefined;
  readonly canStop: boolean;
  readonly keepOnStop: boolean;
}

/** Why a press of Stop did nothing. */
export type StopRefusal = "no-draft" | "no-stop-button";

/** The draft shown in one private chat. */
export class DraftSlot {
  #draft: MessageDraft | undefined;

  /** The draft shown at `now`, or `undefined` (none, or expired). */
  current(now: number): MessageDraft | undefined {
    if (this.#draft !== undefined && now >= this.#draft.expiresAtMs) this.#draft = undefined;
    return this.#draft;
  }

  /** Shows a frame; the same draft id animates the shown draft, another replaces it. */
  write(frame: DraftFrame, now: number): { change: DraftChange; draft: MessageDraft } {
    const shown = this.current(now);
    const change: DraftChange =
      shown === undefined ? "start" : shown.draftId === frame.draftId ? "update" : "replace";
    const continued = change === "update" ? shown : undefined;
    const draft: MessageDraft = Object.freeze({
      draftId: frame.draftId,
      text: frame.text,
      entities: Object.freeze([...frame.entities]),
      messageThreadId: frame.messageThreadId,
      hasStopButton: frame.canStop,
      keepOnStop: frame.keepOnStop,
      isStopped: false,
      frames: (continued?.frames ?? 0) + 1,
      startedAtMs: continued?.startedAtMs ?? now,
      updatedAtMs: now,
      expiresAtMs: now + DRAFT_LIFETIME_MS,
    });
    this.#draft = draft;
    return { change, draft };
  }

  /** Removes the draft (the bot sent a message into the chat). */
  clear(): void {
    this.#draft = undefined;
  }

  /** The draft a press of Stop would stop now, or why there is none. */
  stoppable(now: number): MessageDraft | StopRefusal {
    const shown = this.current(now);
    if (shown === undefined) return "no-draft";
    return shown.hasStopButton ? shown : "no-stop-button";
  }

  /**
   * The user presses Stop (check {@link stoppable} first): the draft disappears, or with
   * `keep_on_stop` stays shown without a button until it expires or the bot sends a message.
   */
  stop(draft: MessageDraft): void {
    this.#draft = draft.keepOnStop
      ? Object.freeze({ ...draft, hasStopButton: false, isStopped: true })
      : undefined;
  }
}

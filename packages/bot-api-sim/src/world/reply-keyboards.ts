// The reply keyboard each user of a chat sees. A Message never carries one (only inline keyboards
// stay on a message), so the chat remembers it: a bot's ReplyKeyboardMarkup shows it, a
// ReplyKeyboardRemove hides it — with `selective`, only for the users the message targets.

import type { ReplyKeyboardMarkup } from "@grammyjs/types";

/** A reply keyboard a user sees, and the bot message that showed it. */
export interface ShownReplyKeyboard {
  readonly markup: ReplyKeyboardMarkup;
  /** The message that came with the keyboard. */
  readonly messageId: number;
  /** The bot that sent it. */
  readonly botId: number;
}

/** The reply keyboards of one chat. */
export class ReplyKeyboards {
  #forEveryone: ShownReplyKeyboard | undefined;
  /**
   * Selective changes, per user id: a keyboard, or `null` for "removed for this user". Its keys
   * are users of the chat, so it is bounded by the chat's members.
   */
  readonly #perUser = new Map<number, ShownReplyKeyboard | null>();

  /**
   * Applies a keyboard (or its removal, `undefined`) that a bot message brought. `targets` are
   * the user ids a selective markup is meant for, or `"everyone"`.
   */
  apply(shown: ShownReplyKeyboard | undefined, targets: readonly number[] | "everyone"): void {
    if (targets === "everyone") {
      this.#forEveryone = shown;
      this.#perUser.clear();
      return;
    }
    for (const id of targets) this.#perUser.set(id, shown ?? null);
  }

  /** The keyboard a user sees now, or `undefined`. */
  shownTo(userId: number): ShownReplyKeyboard | undefined {
    const own = this.#perUser.get(userId);
    if (own === null) return undefined;
    return own ?? this.#forEveryone;
  }
}

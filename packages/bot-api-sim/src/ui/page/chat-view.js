// The open chat: its header, its messages as they stand (edits replace a bubble in place, deletes
// remove it), the bot's draft, the composer, and the person's actions — each a control API call
// as the chat's user (or, in a group, the member chosen to send as).

import { act, base64Of, read } from "./api.js";
import { Composer } from "./composer.js";
import { $ } from "./dom.js";
import { DraftView } from "./draft-view.js";
import { avatar, chatTitle, dayLabel, userName } from "./format.js";
import { notice, renderMessage } from "./message-view.js";
import { alertBox, attempt, toast } from "./toast.js";

/** How long a chat action ("typing") shows, as in Telegram's clients, in ms. */
const CHAT_ACTION_MS = 5000;
/** How long an inline button shows its spinner while the bot has not answered, in ms. */
const ANSWER_WAIT_MS = 15_000;
/** Answers kept for presses whose POST has not returned yet (the answer can come first). */
const EARLY_ANSWERS = 64;
const PHOTO_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

const ACTION_TEXT = {
  typing: "typing",
  upload_photo: "sending a photo",
  upload_document: "sending a file",
  upload_video: "sending a video",
  record_video: "recording a video",
  record_voice: "recording a voice message",
  upload_voice: "sending a voice message",
  choose_sticker: "choosing a sticker",
  find_location: "finding a location",
};

/** The chat pane. `onOpened(entry)` tells the app which chat is shown now. */
export class ChatView {
  #entry = null;
  #view = null;
  #actingUserId = 0;
  #senders = new Map();
  /** The chat's messages as they stand, by id in order: { message, node }. */
  #messages = new Map();
  #pending = new Map();
  #earlyAnswers = new Map();
  #actionTimer = 0;
  #loading = null;
  #queued = [];
  #draft = new DraftView($("draft-slot"), $("scroller"), () => void this.#stopDraft());
  #composer;
  #onChanged;

  /** `onChanged()` runs after anything that may change the side panel. */
  constructor(onChanged) {
    this.#onChanged = onChanged;
    this.#composer = new Composer({
      send: (text, replyTo) => this.#sendText(text, replyTo),
      edit: (messageId, text) =>
        attempt(() => act("/messages/edit", { ...this.#who(), message_id: messageId, text })),
      upload: (file, caption, replyTo) => this.#upload(file, caption, replyTo),
      senderChanged: (userId) => {
        this.#actingUserId = userId;
        this.#senders.set(this.#entry.key, userId);
        this.#renderAll();
        void this.#loadKeyboard();
      },
    });
    $("block-button").addEventListener("click", () => void this.#toggleBlock());
  }

  /** The key of the chat shown, or null. */
  get key() {
    return this.#entry?.key ?? null;
  }

  /** The chat shown, as the list knows it. */
  get entry() {
    return this.#entry;
  }

  /** Shows a chat (a PageChat) and loads it; transcript events that arrive meanwhile wait. */
  async open(entry) {
    this.#entry = entry;
    this.#view = null;
    this.#queued = [];
    $("empty-state").hidden = true;
    $("chat").hidden = false;
    const loading = read("/page/chat", this.#chatQuery());
    this.#loading = loading;
    const view = await attempt(() => loading);
    // A later open() took over while this one loaded.
    if (this.#loading !== loading) return;
    this.#loading = null;
    if (view === undefined) return;
    this.#view = view;
    const members = view.members.filter((member) => member.user !== null);
    this.#actingUserId =
      entry.chat.type === "private"
        ? entry.chat.id
        : (this.#senders.get(entry.key) ?? this.#firstPresent(members));
    this.#composer.setChat({
      members: entry.chat.type === "private" ? [] : members,
      actingUserId: this.#actingUserId,
      commands: view.bots.flatMap((bot) => bot.commands),
    });
    this.#renderHeader();
    this.#renderAll(view.messages);
    this.#draft.show(view.draft, view.nowMs);
    void this.#loadKeyboard();
    // Events newer than the view happened after it was taken.
    const queued = this.#queued;
    this.#queued = [];
    for (const data of queued) {
      if (data.chat.key === entry.key && data.event.seq > view.chat.activitySeq) this.apply(data);
    }
  }

  /** Reloads the open chat (after the live channel reconnected). */
  reload() {
    if (this.#entry !== null) void this.open(this.#entry);
  }

  /** A transcript event of the open chat (`data` as the event stream sends it). */
  apply(data) {
    if (this.#loading !== null) {
      this.#queued.push(data);
      return;
    }
    if (this.#view === null) return;
    const { event } = data;
    this.#entry = data.chat;
    if ((event.kind === "send" || event.kind === "edit") && event.message !== undefined) {
      this.#upsert(event.message);
      if (event.kind === "send" && event.actor === "bot") this.#clearAction();
    } else if (event.kind === "delete") {
      this.#messages.get(event.messageId)?.node.remove();
      this.#messages.delete(event.messageId);
    } else if (event.kind === "chat_action") {
      this.#showAction(event.action);
    }
    this.#draft.show(data.draft, data.nowMs);
    if (event.replyMarkup !== undefined) this.#markupArrived(event);
    if (
      event.actor === "bot" ||
      event.message?.new_chat_members ||
      event.message?.left_chat_member
    ) {
      this.#renderHeader();
    }
  }

  /** A bot answered a button press: a toast, or an alert with show_alert. */
  callbackAnswered({ callbackQueryId, answer }) {
    const pending = this.#pending.get(callbackQueryId);
    if (pending === undefined) {
      this.#earlyAnswers.set(callbackQueryId, answer);
      if (this.#earlyAnswers.size > EARLY_ANSWERS) {
        this.#earlyAnswers.delete(this.#earlyAnswers.keys().next().value);
      }
      return;
    }
    this.#settle(callbackQueryId, pending, answer);
  }

  #settle(id, pending, answer) {
    clearTimeout(pending.timer);
    pending.node.classList.remove("pending");
    this.#pending.delete(id);
    if (answer.text === undefined && answer.url === undefined) return;
    if (answer.showAlert) {
      void alertBox(answer.text ?? "");
    } else {
      toast(
        answer.text ?? "The bot sent a link",
        answer.url === undefined ? {} : { url: answer.url },
      );
    }
  }

  #firstPresent(members) {
    const present = members.find((member) =>
      ["creator", "administrator", "member"].includes(member.status),
    );
    return present?.user.id ?? members[0]?.user.id ?? 0;
  }

  #chatQuery() {
    const { chat, botId } = this.#entry;
    return { chat_id: chat.id, bot_id: botId };
  }

  /** The fields that say who acts where, for the control routes. */
  #who() {
    return { ...this.#chatQuery(), user_id: this.#actingUserId };
  }

  #renderHeader() {
    const entry = this.#entry;
    const title = chatTitle(entry.chat);
    $("chat-avatar").replaceChildren(avatar(title, entry.chat.id, 40));
    $("chat-title").textContent = title;
    const view = this.#view;
    let status;
    if (entry.chat.type === "private") {
      const bot = view?.bots[0];
      status = `private chat with @${bot?.username ?? "bot"}${entry.isBlocked ? " · bot blocked" : ""}`;
    } else {
      const members = (view?.members ?? []).filter((m) =>
        ["creator", "administrator", "member"].includes(m.status),
      ).length;
      const bots = (view?.bots ?? []).filter((b) => ["administrator", "member"].includes(b.status));
      status = `${members} member${members === 1 ? "" : "s"}, ${bots.map((b) => `@${b.username}`).join(", ") || "no bot"}`;
    }
    if (entry.migratedTo !== undefined) status += " · upgraded to a supergroup";
    $("chat-status").dataset.base = status;
    if (!$("chat-status").classList.contains("action")) $("chat-status").textContent = status;
    const block = $("block-button");
    block.hidden = entry.chat.type !== "private";
    block.textContent = entry.isBlocked ? "Unblock bot" : "Block bot";
  }

  #showAction(action) {
    const status = $("chat-status");
    status.classList.add("action");
    status.textContent = `${ACTION_TEXT[action] ?? action}…`;
    clearTimeout(this.#actionTimer);
    this.#actionTimer = setTimeout(() => this.#clearAction(), CHAT_ACTION_MS);
  }

  #clearAction() {
    clearTimeout(this.#actionTimer);
    const status = $("chat-status");
    status.classList.remove("action");
    status.textContent = status.dataset.base ?? "";
  }

  #context(message) {
    return {
      isOutgoing: message.from?.id === this.#actingUserId,
      showSender: this.#entry.chat.type !== "private",
      onButton: (source, button, node) => void this.#press(source, button, node),
      onCopy: (text) =>
        void navigator.clipboard?.writeText(text).then(() => toast("Copied to the clipboard")),
      onInlineQuery: (query) =>
        this.#composer.insert(`@${this.#view?.bots[0]?.username ?? ""} ${query}`),
      onCommand: (command) => void this.#sendText(command, undefined),
      onQuote: (id) => this.#messages.get(id)?.node.scrollIntoView({ block: "center" }),
      onReply: (source) => this.#composer.replyTo(source),
      onEdit: (source) => this.#composer.edit(source),
    };
  }

  /** Renders the chat anew: from `messages`, or from the messages as they stand now. */
  #renderAll(messages = [...this.#messages.values()].map((entry) => entry.message)) {
    const list = $("messages");
    this.#messages.clear();
    list.replaceChildren();
    const earlier = this.#view.earlierMessages;
    if (earlier > 0) {
      list.append(
        notice("service", `${earlier} earlier message${earlier === 1 ? "" : "s"} not shown`),
      );
    }
    for (const message of messages) this.#upsert(message, false);
    this.#scrollToEnd(true);
  }

  #upsert(message, scroll = true) {
    const list = $("messages");
    const atEnd = this.#isAtEnd();
    const node = renderMessage(message, this.#context(message));
    const existing = this.#messages.get(message.message_id);
    if (existing !== undefined) {
      existing.node.replaceWith(node);
    } else {
      const last = [...this.#messages.values()].at(-1)?.message;
      if (last === undefined || dayLabel(last.date) !== dayLabel(message.date)) {
        list.append(notice("day", dayLabel(message.date)));
      }
      list.append(node);
    }
    this.#messages.set(message.message_id, { message, node });
    if (scroll) this.#scrollToEnd(atEnd || message.from?.id === this.#actingUserId);
  }

  #isAtEnd() {
    const scroller = $("scroller");
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
  }

  #scrollToEnd(really) {
    if (!really) return;
    const scroller = $("scroller");
    requestAnimationFrame(() => {
      scroller.scrollTop = scroller.scrollHeight;
    });
  }

  async #loadKeyboard() {
    if (this.#entry === null || this.#actingUserId === 0) return;
    const key = this.#entry.key;
    const shown = await attempt(() => read("/keyboard", this.#who()));
    if (this.#entry?.key === key) this.#composer.setKeyboard(shown ?? null);
  }

  /** A bot's reply keyboard, removal or force-reply request came with a message. */
  #markupArrived(event) {
    void this.#loadKeyboard();
    const markup = event.replyMarkup;
    if (markup.force_reply !== true || event.message === undefined) return;
    const message = event.message;
    const targets = markup.selective === true ? this.#selectiveTargets(message) : undefined;
    if (targets === undefined || targets.includes(this.#actingUserId)) {
      this.#composer.replyTo(message, markup.input_field_placeholder || "Reply to");
    }
  }

  #selectiveTargets(message) {
    const targets = [];
    const text = message.text ?? message.caption ?? "";
    for (const entity of message.entities ?? message.caption_entities ?? []) {
      if (entity.type === "text_mention") targets.push(entity.user.id);
      if (entity.type !== "mention") continue;
      const name = text.slice(entity.offset + 1, entity.offset + entity.length).toLowerCase();
      const member = this.#view?.members.find((m) => m.user?.username?.toLowerCase() === name);
      if (member !== undefined) targets.push(member.user.id);
    }
    const replied = message.reply_to_message?.from;
    if (replied !== undefined && !replied.is_bot) targets.push(replied.id);
    return targets;
  }

  async #sendText(text, replyTo) {
    await attempt(() =>
      act("/messages/text", { ...this.#who(), text, reply_to_message_id: replyTo }),
    );
  }

  async #upload(file, caption, replyTo) {
    const asPhoto = PHOTO_TYPES.has(file.type) && file.size <= MAX_PHOTO_BYTES;
    await attempt(async () =>
      act(asPhoto ? "/messages/photo" : "/messages/document", {
        ...this.#who(),
        content_base64: await base64Of(file),
        file_name: file.name,
        mime_type: file.type || undefined,
        caption,
        reply_to_message_id: replyTo,
      }),
    );
  }

  async #press(message, button, node) {
    node.classList.add("pending");
    const query = await attempt(() =>
      act("/callbacks", {
        ...this.#who(),
        message_id: message.message_id,
        data: button.callback_data,
      }),
    );
    if (query === undefined) {
      node.classList.remove("pending");
      return;
    }
    const pending = {
      node,
      timer: setTimeout(() => {
        node.classList.remove("pending");
        this.#pending.delete(query.id);
      }, ANSWER_WAIT_MS),
    };
    this.#pending.set(query.id, pending);
    const early = this.#earlyAnswers.get(query.id);
    if (early !== undefined) {
      this.#earlyAnswers.delete(query.id);
      this.#settle(query.id, pending, early);
    }
  }

  async #stopDraft() {
    await attempt(() => act("/drafts/stop", this.#who()));
  }

  async #toggleBlock() {
    const entry = this.#entry;
    if (entry?.chat.type !== "private") return;
    const done = await attempt(() =>
      act(entry.isBlocked ? "/users/unblock" : "/users/block", {
        user_id: entry.chat.id,
        bot_id: entry.botId,
      }),
    );
    if (done !== undefined) {
      toast(
        entry.isBlocked
          ? `${userName(entry.chat)} unblocked the bot`
          : `${userName(entry.chat)} blocked the bot`,
      );
      this.#onChanged();
    }
  }
}
